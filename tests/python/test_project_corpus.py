"""The project's own labelled corpus (corpus/labels.jsonl) is well formed and complete."""

import hashlib
import json
from collections import Counter

import gpudiag
from conftest import ROOT
from gpudiag.eval import load_corpus

TAXONOMY = {c.id: c for c in gpudiag.taxonomy()}
G15 = {c.g15 for c in TAXONOMY.values()}
# taxonomy.md: the published corpus files "CUDA capability sm_90 is not compatible" under runtime_error.
ALLOWED_OVERRIDES = {("env_error", "runtime_error")}
ROWS = [json.loads(line) for line in (ROOT / "corpus" / "labels.jsonl").read_text().splitlines()]


def test_manifest_validates_and_every_log_is_there():
    corpus = load_corpus(ROOT / "corpus")
    assert corpus.has_fine_labels and corpus.has_splits
    for s in corpus.samples:
        assert s.log_path.is_file(), f"{s.id}: {s.log_path} is missing"
        assert s.log_path.is_relative_to(ROOT), f"{s.id}: log outside the repository"
        assert s.fine in TAXONOMY, f"{s.id}: class {s.fine!r} is not in the taxonomy"
        assert s.mode in G15, f"{s.id}: mode {s.mode!r} is not a g15 class or generic"
        if s.mode != TAXONOMY[s.fine].g15:
            assert (s.fine, s.mode) in ALLOWED_OVERRIDES, f"{s.id}: {s.fine} projected to {s.mode}"


def test_every_fine_class_has_at_least_ten_logs():
    counts = Counter(r["class"] for r in ROWS)
    short = {c: counts.get(c, 0) for c in TAXONOMY if counts.get(c, 0) < 10}
    assert not short, f"classes with fewer than 10 logs: {short}"


def test_held_out_split_is_the_fixed_hash_of_the_id():
    for r in ROWS:
        bucket = int(hashlib.sha256(r["id"].encode()).hexdigest(), 16) % 100
        assert r["split"] == ("held_out" if bucket < 30 else "dev"), r["id"]
    share = sum(r["split"] == "held_out" for r in ROWS) / len(ROWS)
    assert 0.2 < share < 0.4


def test_sources_and_capture_versions_are_recorded():
    assert {r["source"] for r in ROWS} <= {"captured", "composed", "derived"}
    captured = [r for r in ROWS if r["source"] == "captured"]
    assert len(captured) >= 200
    for r in captured:
        assert r["versions"]["torch"].startswith("2.13.0"), r["id"]
        assert r["framework"] in {"plain", "hf", "lightning", "ddp"}
    frameworks = Counter(r["framework"] for r in captured)
    assert all(frameworks[f] >= 20 for f in ("plain", "hf", "lightning", "ddp")), frameworks


def test_logs_range_from_a_few_lines_to_megabytes():
    sizes = [(ROOT / r["log_path"]).stat().st_size for r in ROWS]
    assert min(sizes) < 1000 and max(sizes) > 1_000_000


def test_captured_throughput_look_alikes_are_healthy_with_their_finding():
    """A debugging switch left on and a save at every step slow a run that is healthy."""
    expected = {"healthy-22-plain-job": "save_storm", "healthy-24-plain-job": "launch_blocking"}
    for sid, reason in expected.items():
        d = gpudiag.diagnose(ROOT / "corpus" / "logs" / "captured" / f"{sid}.log", exit_code=0)
        assert d.class_ == "healthy", sid
        assert [f.reason for f in d.findings if f.kind == "throughput"] == [reason], sid
