"""The quality bar on the project corpus: `make test` fails below it.

Scored by the evaluation harness, exactly as `python -m gpudiag.eval corpus`
reports it. The held-out split was fixed by a hash of each log's id before
any rule was tuned, and rules are tuned on the dev split only.
"""

from collections import defaultdict

import pytest

from conftest import PUBLISHED_CORPUS, ROOT, WILD_CORPUS
from gpudiag.eval import evaluate, load_corpus
from gpudiag.eval.evaluate import GPUDIAG, GPUDIAG_WITH_EXIT

HELD_OUT_FINE_MACRO_F1 = 0.97  # design.md's bar for the project corpus


@pytest.fixture(scope="module")
def evaluation():
    return evaluate(load_corpus(ROOT / "corpus"), resamples=50)


def test_held_out_fine_macro_f1_meets_the_bar(evaluation):
    # The corpus records each job's exit status, as a scheduler does. The bar
    # holds both with it and from the log alone, though some logs hold no
    # evidence but that status (a bare SIGABRT prints nothing).
    held_out = evaluation.spaces["fine"].by_group["split"]["held_out"]
    assert held_out[GPUDIAG_WITH_EXIT].macro_f1 >= HELD_OUT_FINE_MACRO_F1
    assert held_out[GPUDIAG].macro_f1 >= HELD_OUT_FINE_MACRO_F1


def test_no_healthy_log_is_called_a_failure(evaluation):
    for classifier in (GPUDIAG, GPUDIAG_WITH_EXIT):
        alarms = evaluation.spaces["fine"].false_alarms[classifier]
        assert alarms.healthy >= 20
        assert alarms.alarms == 0, f"{classifier}: {alarms.ids}"


def test_published_corpus_is_untouched_by_the_extra_classes():
    if not PUBLISHED_CORPUS.is_dir():
        pytest.skip(f"the published corpus is not at {PUBLISHED_CORPUS}")
    ev = evaluate(load_corpus(PUBLISHED_CORPUS), resamples=10, with_exit_codes=False)
    assert ev.spaces["g15"].scores[GPUDIAG].macro_f1 == 1.0


def per_class(evaluation, classifier):
    truth = evaluation.spaces["fine"].truth
    pred = evaluation.predictions[classifier]["fine"]
    hits, total, claimed = defaultdict(int), defaultdict(int), defaultdict(int)
    for t, p in zip(truth, pred):
        total[t] += 1
        claimed[p] += 1
        hits[t] += t == p
    return hits, total, claimed


CLASSES = sorted({s.fine for s in load_corpus(ROOT / "corpus").samples})


@pytest.mark.parametrize("cls", CLASSES)
def test_every_class_is_recognised_on_the_project_corpus(evaluation, cls):
    hits, total, claimed = per_class(evaluation, GPUDIAG_WITH_EXIT)
    recall = hits[cls] / total[cls]
    precision = hits[cls] / claimed[cls] if claimed[cls] else 0.0
    assert recall >= 0.8, f"{cls}: {hits[cls]} of {total[cls]} logs recognised"
    assert precision >= 0.8, f"{cls}: {hits[cls]} of {claimed[cls]} predictions right"


WILD_FINE_MACRO_F1 = 0.90  # issue 11's bar for real logs nobody here wrote


@pytest.fixture(scope="module")
def wild():
    if not WILD_CORPUS.is_dir():
        pytest.skip(f"the wild set is not at {WILD_CORPUS}")
    return evaluate(load_corpus(WILD_CORPUS), resamples=10)


def test_wild_set_meets_the_bar(wild):
    # Real logs from public threads and committed training runs, scored with
    # each job's exit status where the thread or the log shows or implies it.
    assert wild.spaces["fine"].scores[GPUDIAG_WITH_EXIT].macro_f1 >= WILD_FINE_MACRO_F1


def test_no_healthy_wild_log_is_called_a_failure(wild):
    for classifier in (GPUDIAG, GPUDIAG_WITH_EXIT):
        alarms = wild.spaces["fine"].false_alarms[classifier]
        assert alarms.healthy >= 20
        assert alarms.alarms == 0, f"{classifier}: {alarms.ids}"
