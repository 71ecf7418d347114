"""Every log of the published 474-log corpus, classified in its 15-class space."""

import json

import pytest

import gpudiag
from conftest import PUBLISHED_CORPUS

LABELS = PUBLISHED_CORPUS / "corpus" / "labels.jsonl"


@pytest.mark.skipif(not LABELS.is_file(), reason=f"published corpus not found at {PUBLISHED_CORPUS}")
def test_every_published_log_is_classified_correctly():
    samples = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    assert len(samples) == 474
    wrong = []
    for s in samples:
        d = gpudiag.diagnose((PUBLISHED_CORPUS / s["log_path"]))
        if d.g15 != s["mode"]:
            wrong.append(f"{s['id']}: expected {s['mode']}, got {d.class_} ({d.g15})")
    assert not wrong, "\n".join(wrong)
