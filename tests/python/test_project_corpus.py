"""The project's own labelled corpus (corpus/labels.jsonl) is well formed."""

import gpudiag
from conftest import ROOT
from gpudiag.eval import load_corpus

G15 = {c.g15 for c in gpudiag.taxonomy()}
FINE = {c.id for c in gpudiag.taxonomy()}


def test_manifest_validates_and_every_log_is_there():
    corpus = load_corpus(ROOT / "corpus")
    assert corpus.has_fine_labels
    for s in corpus.samples:
        assert s.log_path.is_file(), f"{s.id}: {s.log_path} is missing"
        assert s.log_path.is_relative_to(ROOT), f"{s.id}: log outside the repository"
        assert s.fine in FINE, f"{s.id}: class {s.fine!r} is not in the taxonomy"
        assert s.mode in G15, f"{s.id}: mode {s.mode!r} is not a g15 class or generic"
