"""The evaluation harness: the published figures reproduced, and any corpus scored."""

import json
import subprocess
import sys

import numpy as np
import pytest

import gpudiag
from sklearn.metrics import f1_score

from conftest import PUBLISHED_CORPUS
from gpudiag.eval import (GPUDIAG, GPUDIAG_WITH_EXIT, CorpusError, evaluate, exit_code_only,
                          keyword, last_exception, load_corpus, mcnemar_exact, write_results)
from gpudiag.eval.metrics import macro_f1_of_resamples, resample_indices

have_published = pytest.mark.skipif(
    not (PUBLISHED_CORPUS / "corpus" / "labels.jsonl").is_file(),
    reason=f"published corpus not found at {PUBLISHED_CORPUS}")


@pytest.fixture(scope="module")
def published():
    return evaluate(load_corpus(PUBLISHED_CORPUS))


# The published table (PROVENANCE.md of the corpus): macro-F1, interval, accuracy.
PUBLISHED = {
    "keyword": (0.830, (0.822, 0.838), 0.859),
    "last exception": (0.559, (0.552, 0.565), 0.601),
    "exit code": (0.133, (0.133, 0.133), 0.131),
}


@have_published
@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_baselines_reproduce_the_published_figures(published, name):
    s = published.spaces["g15"].scores[name]
    macro, (lo, hi), accuracy = PUBLISHED[name]
    assert round(s.macro_f1, 3) == macro
    assert (round(s.ci[0], 3), round(s.ci[1], 3)) == (lo, hi)
    assert round(s.accuracy, 3) == accuracy


@have_published
def test_gpudiag_is_perfect_on_the_published_corpus(published):
    g15 = published.spaces["g15"]
    assert len(g15.truth) == 474 and len(g15.scores[GPUDIAG].labels) == 15
    for name in (GPUDIAG, GPUDIAG_WITH_EXIT):
        assert round(g15.scores[name].macro_f1, 3) == 1.000
        assert g15.scores[name].ci == (1.0, 1.0)
    m = g15.mcnemar[GPUDIAG]
    assert m.only_second == 0 and m.only_first > 0 and m.p_value < 1e-6
    assert set(g15.by_group["source"]) == {"injected", "synthetic", "wild"}
    assert "fine" not in published.spaces  # the published manifest has no fine labels


@have_published
def test_command_line_writes_every_output(tmp_path):
    out = tmp_path / "results"
    run = subprocess.run([sys.executable, "-m", "gpudiag.eval", str(PUBLISHED_CORPUS), "--out",
                          str(out), "--resamples", "50"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "| keyword | 0.830 |" in run.stdout and "| gpudiag | 1.000 |" in run.stdout
    assert "474/474" in run.stderr  # progress
    assert {p.name for p in out.iterdir()} == {
        "summary.md", "per_class.csv", "predictions.csv", "confusion_g15.png"}
    assert (out / "summary.md").read_text().strip() == run.stdout.strip()
    rows = (out / "per_class.csv").read_text().splitlines()
    assert rows[0] == "space,classifier,class,precision,recall,f1,support"
    assert len(rows) == 1 + 5 * 15
    assert (out / "confusion_g15.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len((out / "predictions.csv").read_text().splitlines()) == 475


def test_keyword_baseline_takes_the_first_keyword_in_its_order():
    assert keyword("NCCL WARN ...\nCUDA out of memory") == "cuda_oom"
    assert keyword("Killed\nRuntimeError: x") == "oom_killer"
    assert keyword("loss is nan") == "nan_loss"
    assert keyword("cuda out of memory") == "generic"  # case-sensitive
    assert keyword("all good") == "generic"


def test_exit_code_baseline():
    assert exit_code_only("", -11) == "segfault"
    assert exit_code_only("", -9) == "oom_killer"
    assert exit_code_only("", 137) == "generic"
    assert exit_code_only("", None) == "generic"


def test_last_exception_baseline_reads_the_last_line_initial_error_name():
    log = ("Traceback (most recent call last):\nValueError: first\n"
           "During handling...\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    assert last_exception(log) == "cuda_oom"
    assert last_exception("ImportError: cannot import name 'x'\n") == "missing_module"
    assert last_exception("KeyError: 'x'\nValueError: y\n") == "traceback"
    assert last_exception("    RuntimeError: indented\n") == "generic"
    assert last_exception("no exception here\n") == "generic"


def test_vectorised_bootstrap_equals_scikit_learn_on_each_resample():
    rng = np.random.default_rng(7)
    labels = ["a", "b", "c", "d"]
    y = rng.choice(labels + ["generic"], 40)
    p = np.where(rng.random(40) < 0.7, y, rng.choice(labels + ["generic"], 40))
    idx = resample_indices(len(y), 30, seed=3)
    fast = macro_f1_of_resamples(y, p, labels, idx)
    for k, rows in enumerate(idx):
        present = [lab for lab in labels if lab in set(y[rows]) | set(p[rows])]
        expected = f1_score(y[rows], p[rows], labels=present, average="macro", zero_division=0)
        assert fast[k] == pytest.approx(expected)


def test_mcnemar_exact_test():
    m = mcnemar_exact([True] * 5 + [False] * 3, [False] * 5 + [False] * 3)
    assert (m.only_first, m.only_second) == (5, 0)
    assert m.p_value == pytest.approx(0.0625)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0


def _write_corpus(root, samples):
    (root / "corpus" / "logs").mkdir(parents=True)
    with open(root / "corpus" / "labels.jsonl", "w") as f:
        for sid, mode, fine, split, text in samples:
            path = f"corpus/logs/{sid}.log"
            if text is not None:
                (root / path).write_text(text)
            f.write(json.dumps({"id": sid, "mode": mode, "class": fine, "source": "composed",
                                "split": split, "log_path": path, "true_exit_code": 1}) + "\n")


HEALTHY_WITH_NAN_WORD = (
    "***** Running training *****\n"
    "dataset: financial news, 1,204 docs\n"  # "financial" holds "nan"
    "{'loss': '2.731', 'grad_norm': '1.912', 'learning_rate': '4.6e-05', 'epoch': '0.08'}\n"
    "{'loss': '1.655', 'grad_norm': '0.994', 'learning_rate': '6.0e-06', 'epoch': '0.88'}\n"
    "\n\nTraining completed. Do not forget to share your model on huggingface.co/models =)\n\n")


def test_a_fine_labelled_corpus_is_scored_in_both_spaces_with_false_alarms(tmp_path):
    _write_corpus(tmp_path, [
        ("oom", "cuda_oom", "cuda_oom", "dev",
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"),
        ("mod", "missing_module", "missing_module", "held_out",
         "ModuleNotFoundError: No module named 'flash_attn'\n"),
        ("ok", "generic", "healthy", "held_out", HEALTHY_WITH_NAN_WORD),
        ("gone", "segfault", "segfault", "dev", None),  # its log is missing
    ])
    ev = evaluate(load_corpus(tmp_path), resamples=20)
    assert set(ev.spaces) == {"g15", "fine"}
    fine = ev.spaces["fine"]
    assert fine.scores[GPUDIAG].labels == ("cuda_oom", "healthy", "missing_module", "segfault")
    assert ev.predictions[GPUDIAG]["fine"][:3] == ["cuda_oom", "missing_module", "healthy"]
    assert fine.false_alarms[GPUDIAG].alarms == 0
    assert fine.false_alarms["keyword"].ids == ("ok",)  # "nan" in "financial"
    assert fine.false_alarms["keyword"].rate == 1.0
    assert set(fine.by_group["split"]) == {"dev", "held_out"}
    assert fine.by_group["split"]["held_out"][GPUDIAG].macro_f1 == 1.0
    # The unreadable log is named and counted as a miss for every classifier.
    assert [e[0] for e in ev.errors] == ["gone"]
    assert fine.scores[GPUDIAG].accuracy == 0.75

    files = write_results(ev, tmp_path / "out")
    summary = files["summary"].read_text()
    assert "fine space" in summary and "False alarms" in summary and "By split" in summary
    assert "gone" in summary and "labelled segfault, predicted unreadable" in summary
    assert files["confusion_fine"].is_file()


def test_missing_corpus_says_what_to_do(tmp_path):
    run = subprocess.run([sys.executable, "-m", "gpudiag.eval", str(tmp_path / "nowhere")],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert "corpus not found" in run.stderr and "nowhere" in run.stderr
    assert "GPUDIAG_EVAL_CORPUS" in run.stderr


def test_unreadable_logs_give_exit_status_1_and_the_rest_is_scored(tmp_path):
    _write_corpus(tmp_path, [
        ("mod", "missing_module", "missing_module", None, "ModuleNotFoundError: No module named 'x'\n"),
        ("gone", "segfault", "segfault", None, None)])
    run = subprocess.run([sys.executable, "-m", "gpudiag.eval", str(tmp_path), "-q", "--out",
                          str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 1
    assert "gone" in run.stderr and "gone.log" in run.stderr
    assert "| gpudiag |" in run.stdout


@pytest.mark.parametrize("line, problem", [
    ("{not json", ":1: not valid JSON"),
    ('{"id": "a", "log_path": "x.log"}', ":1: field 'mode' is missing"),
    ('{"id": "a", "mode": "nccl", "log_path": "x", "true_exit_code": "9"}', "must be an integer"),
])
def test_bad_manifest_names_the_line_and_the_problem(tmp_path, line, problem):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "labels.jsonl").write_text(line + "\n")
    with pytest.raises(CorpusError, match=problem.replace("(", r"\(")):
        load_corpus(tmp_path)


def test_duplicate_ids_are_rejected(tmp_path):
    row = '{"id": "a", "mode": "nccl", "log_path": "x.log"}\n'
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "labels.jsonl").write_text(row + row)
    with pytest.raises(CorpusError, match=":2: id 'a' appears twice"):
        load_corpus(tmp_path)


@have_published
def test_report_has_a_classification_report_per_classifier_and_says_what_each_metric_counts(published):
    """Issue 18, point 11: scikit-learn's classification_report for each
    classifier, and a line per metric on what it counts."""
    from sklearn.metrics import classification_report
    from gpudiag.eval.report import summary_markdown
    text = summary_markdown(published)
    g15 = published.spaces["g15"]
    labels = list(g15.scores[GPUDIAG].labels)
    for name in published.classifiers:
        report = classification_report(g15.truth, published.predictions[name]["g15"], labels=labels,
                                       digits=3, zero_division=0)
        assert f"{name}:\n\n```text\n{report.rstrip()}\n```" in text
    for metric in ("- macro-F1: the mean of the 15 scored classes' F1", "- 95% CI: the 2.5th and 97.5th",
                   "- accuracy: the share of all 474 logs", "- McNemar vs keyword: the exact two-sided"):
        assert metric in text


def test_accuracy_from_generic_logs_is_named(tmp_path):
    """Issue 18, point 11: logs labelled generic count in accuracy only, and
    the report says how much of each classifier's accuracy they make."""
    _write_corpus(tmp_path, [
        ("oom", "cuda_oom", "cuda_oom", "dev", "torch.OutOfMemoryError: CUDA out of memory.\n"),
        ("ok", "generic", "healthy", "dev", HEALTHY_WITH_NAN_WORD),
        ("odd", "generic", "unknown", "dev", "nothing to see\n"),
    ])
    ev = evaluate(load_corpus(tmp_path), resamples=20)
    from gpudiag.eval.report import summary_markdown
    text = summary_markdown(ev)
    assert "labelled `generic` or `unknown` included: they count here and in no class's F1" in text
    line = next(x for x in text.splitlines() if x.startswith("- of each classifier's accuracy"))
    g15 = ev.spaces["g15"]
    unscored = [i for i, t in enumerate(g15.truth) if t not in g15.scores[GPUDIAG].labels]
    right = sum(ev.predictions["exit code"]["g15"][i] == g15.truth[i] for i in unscored)
    assert f"exit code {right / len(g15.truth):.3f} of {g15.scores['exit code'].accuracy:.3f}" in line


@have_published
def test_intervals_and_mcnemar_counts_are_explained(published, tmp_path):
    """Issue 18, point 12: a zero-width interval says why (and is right: every
    resample of the exit-code baseline scores 2/15); McNemar's counts name the
    classifier right in each; predictions.csv has confidence and rule."""
    from gpudiag.eval.metrics import macro_f1_of_resamples, resample_indices
    from gpudiag.eval.report import summary_markdown
    g15 = published.spaces["g15"]
    values = macro_f1_of_resamples(g15.truth, published.predictions["exit code"]["g15"],
                                   g15.scores["exit code"].labels, resample_indices(474, 200, 3))
    assert np.allclose(values, 2 / 15)
    text = summary_markdown(published)
    assert "exit code's interval has zero width, and rightly: it gets every log of 2 of the 15 classes" in text
    m = g15.mcnemar[GPUDIAG]
    assert f"gpudiag alone right on {m.only_first} logs, keyword alone right on {m.only_second}" in text
    out = write_results(published, tmp_path / "r")
    import csv
    rows = list(csv.DictReader(open(out["predictions"])))
    d = gpudiag.diagnose(PUBLISHED_CORPUS / rows[0]["log_path"])
    assert float(rows[0]["gpudiag confidence"]) == round(d.confidence, 4)
    assert rows[0]["gpudiag rule"] == d.evidence[0].rule
    assert all(r["gpudiag rule"] for r in rows)  # every published log is decided by a line


def test_help_and_the_default_corpus_from_anywhere(tmp_path):
    """Issue 18, point 12: --help prints 95%, not 95%%; the default corpus is
    found relative to the project, not the working directory."""
    help_text = subprocess.run([sys.executable, "-m", "gpudiag.eval", "--help"], capture_output=True,
                               text=True, cwd=tmp_path).stdout
    assert "95% interval" in help_text and "%%" not in help_text
    from gpudiag.eval import default_corpus_path
    import os
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        env = os.environ.pop("GPUDIAG_EVAL_CORPUS", None)
        found = default_corpus_path()
    finally:
        os.chdir(cwd)
        if env is not None:
            os.environ["GPUDIAG_EVAL_CORPUS"] = env
    if (PUBLISHED_CORPUS / "corpus" / "labels.jsonl").is_file():
        assert found == PUBLISHED_CORPUS.resolve()
