"""Writes an evaluation out: markdown summary, per-class CSV, predictions, confusion matrices."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Dict, List

from sklearn.metrics import classification_report

from .evaluate import GPUDIAG, REFERENCE, Evaluation, SpaceResult

SPACE_TITLE = {"g15": "g15 space (the published corpus's 15 classes)",
               "fine": "fine space (the taxonomy's class ids)"}


def _ci(lo: float, hi: float) -> str:
    return "n/a" if math.isnan(lo) else f"[{lo:.3f}, {hi:.3f}]"


def _f(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _mcnemar_cell(c: str, result: SpaceResult) -> str:
    if c not in result.mcnemar:
        return "reference" if c == REFERENCE else ""
    m = result.mcnemar[c]
    return (f"p = {_p(m.p_value)}: {c} alone right on {m.only_first} logs, "
            f"{REFERENCE} alone right on {m.only_second}")


def _zero_width(ev: Evaluation, result: SpaceResult, c: str) -> str:
    """Why a classifier's interval has no width, from its per-class scores."""
    s = result.scores[c]
    f1s = [cs.f1 for cs in s.per_class]
    if all(f == 1.0 for f in f1s):
        return f"- {c}'s interval has zero width: it is right on every log, so every resample scores 1.000."
    if all(f in (0.0, 1.0) for f in f1s):
        k = sum(f == 1.0 for f in f1s)
        return (f"- {c}'s interval has zero width, and rightly: it gets every log of {k} of the "
                f"{len(f1s)} classes right and no log of the others, so every resample scores the "
                f"same share of perfect classes ({k}/{len(f1s)} = {k / len(f1s):.3f}). The interval is "
                "over resamples of the logs; a classifier whose per-class F1 is all 1s and 0s does "
                "not move with them.")
    return f"- {c}'s interval has zero width: each of the {ev.resamples} resamples gives the same macro-F1."


def _explanations(ev: Evaluation, result: SpaceResult) -> List[str]:
    """One line per metric saying what it counts, with this corpus's numbers."""
    labels = set(result.scores[GPUDIAG].labels)
    n, k = len(result.truth), len(labels)
    unscored = [i for i, t in enumerate(result.truth) if t not in labels]
    out = ["What the columns count:", "",
           f"- macro-F1: the mean of the {k} scored classes' F1 (the labels the corpus holds, less "
           "`generic` and `unknown`), each class weighing the same however many logs it has; a class "
           "a classifier never gets right counts as F1 0.",
           f"- 95% CI: the 2.5th and 97.5th percentiles of macro-F1 over {ev.resamples} bootstrap "
           f"resamples of the {n} logs (drawn with replacement, seed {ev.seed}): how much the score "
           "owes to which logs the corpus happens to hold.",
           f"- accuracy: the share of all {n} logs whose label is predicted exactly"
           + (f", the {len(unscored)} labelled `generic` or `unknown` included: they count here and in "
              "no class's F1, so a classifier can score accuracy on them alone." if unscored else "."),
           f"- McNemar vs {REFERENCE}: the exact two-sided binomial test on the logs exactly one of the "
           f"two classifiers gets right; the counts say on how many each was the one right."]
    if unscored:
        shares = []
        for c in ev.classifiers:
            predicted = ev.predictions[c][result.space]
            right = sum(predicted[i] == result.truth[i] for i in unscored)
            shares.append(f"{c} {right / n:.3f} of {result.scores[c].accuracy:.3f}")
        out.append("- of each classifier's accuracy, the part made on logs labelled `generic` or `unknown`: "
                   + ", ".join(shares) + ".")
    for c in ev.classifiers:
        lo, hi = result.scores[c].ci
        if not math.isnan(lo) and lo == hi:
            out.append(_zero_width(ev, result, c))
    return out + [""]


def _per_class_reports(ev: Evaluation, result: SpaceResult) -> List[str]:
    """scikit-learn's classification_report for each classifier, over the scored classes."""
    labels = list(result.scores[GPUDIAG].labels)
    out = [f"Per class ({result.space} space; scikit-learn's classification_report over the scored "
           "classes: its micro average is over them alone, its macro average F1 is the macro-F1 above):", ""]
    for c in ev.classifiers:
        report = classification_report(result.truth, ev.predictions[c][result.space], labels=labels,
                                       digits=3, zero_division=0)
        out += [f"{c}:", "", "```text", report.rstrip(), "```", ""]
    return out


def _space_tables(ev: Evaluation, result: SpaceResult) -> List[str]:
    out = [f"### {SPACE_TITLE.get(result.space, result.space)}", "",
           f"{len(result.scores[GPUDIAG].labels)} classes scored, {len(result.truth)} logs.", "",
           "| classifier | macro-F1 | 95% CI | accuracy | McNemar vs keyword |",
           "|---|---|---|---|---|"]
    for c in ev.classifiers:
        s = result.scores[c]
        out.append(f"| {c} | {_f(s.macro_f1)} | {_ci(*s.ci)} | {s.accuracy:.3f} | {_mcnemar_cell(c, result)} |")
    out.append("")
    out += _explanations(ev, result)
    for kind, groups in result.by_group.items():
        out += [f"By {kind} (macro-F1 over the classes each {kind} holds; n/a where it holds "
                "only unscored labels such as unknown):", "",
                f"| {kind} | logs | " + " | ".join(ev.classifiers) + " |",
                "|---|---|" + "---|" * len(ev.classifiers)]
        for group, scores in groups.items():
            cells = []
            for c in ev.classifiers:
                s = scores[c]
                shown = c == GPUDIAG and not math.isnan(s.macro_f1)
                cells.append(f"{_f(s.macro_f1)} {_ci(*s.ci)}" if shown else _f(s.macro_f1))
            out.append(f"| {group} | {scores[GPUDIAG].n} | " + " | ".join(cells) + " |")
        out.append("")
    if result.false_alarms:
        healthy = result.false_alarms[GPUDIAG].healthy
        out += [f"False alarms: healthy logs given a failure class ({healthy} healthy logs):", "",
                "| classifier | false alarms | rate |", "|---|---|---|"]
        for c in ev.classifiers:
            fa = result.false_alarms[c]
            rate = "n/a" if fa.rate is None else f"{fa.rate:.3f}"
            out.append(f"| {c} | {fa.alarms} | {rate} |")
        out.append("")
    return out + _per_class_reports(ev, result)


def summary_markdown(ev: Evaluation) -> str:
    out = [f"## Evaluation of `{ev.corpus.name}`", "",
           f"{len(ev.corpus.samples)} logs from `{ev.corpus.root}`; bootstrap 95% intervals from "
           f"{ev.resamples} resamples (seed {ev.seed}); McNemar's exact test on the logs one "
           "classifier gets right and the other wrong.", ""]
    for result in ev.spaces.values():
        out += _space_tables(ev, result)
    if ev.errors:
        out += [f"Unreadable logs, counted as misses for every classifier ({len(ev.errors)}):", ""]
        out += [f"- {sample}: {why}" for sample, why in ev.errors] + [""]
    misses = _misses(ev)
    if misses:
        out += [f"gpudiag's misses ({len(misses)}):", ""] + misses[:50] + [""]
    return "\n".join(out)


def _misses(ev: Evaluation) -> List[str]:
    lines = []
    for space, result in ev.spaces.items():
        for sample, truth, pred in zip(ev.corpus.samples, result.truth,
                                       ev.predictions[GPUDIAG][space]):
            if truth != pred:
                lines.append(f"- {sample.id} ({space}): labelled {truth}, predicted {pred}")
    return lines


def write_per_class_csv(ev: Evaluation, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["space", "classifier", "class", "precision", "recall", "f1", "support"])
        for space, result in ev.spaces.items():
            for c in ev.classifiers:
                for cs in result.scores[c].per_class:
                    w.writerow([space, c, cs.label, f"{cs.precision:.4f}", f"{cs.recall:.4f}",
                                f"{cs.f1:.4f}", cs.support])


def write_predictions_csv(ev: Evaluation, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        spaces = list(ev.spaces)
        variants = list(ev.decisions)
        w.writerow(["id", "source", "split", "log_path", "exit_code"]
                   + [f"label_{s}" for s in spaces]
                   + [f"{c} ({s})" for s in spaces for c in ev.classifiers]
                   + [f"{c} {what}" for c in variants for what in ("confidence", "rule")])
        for i, sample in enumerate(ev.corpus.samples):
            decided = []
            for c in variants:
                d = ev.decisions[c][i]
                decided += ["", ""] if d is None else [f"{d.confidence:.4f}", d.rule]
            w.writerow([sample.id, sample.source, sample.split or "", sample.log_path,
                        "" if sample.exit_code is None else sample.exit_code]
                       + [ev.spaces[s].truth[i] for s in spaces]
                       + [ev.predictions[c][s][i] for s in spaces for c in ev.classifiers]
                       + decided)


def write_confusion_png(ev: Evaluation, space: str, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import confusion_matrix

    result = ev.spaces[space]
    predicted = ev.predictions[GPUDIAG][space]
    rows = list(result.scores[GPUDIAG].labels)
    rows += sorted(set(result.truth) - set(rows))
    cols = rows + sorted(set(predicted) - set(rows))
    matrix = confusion_matrix(result.truth, predicted, labels=cols)[: len(rows)]
    size = max(6.0, 0.42 * len(cols) + 3)
    fig, ax = plt.subplots(figsize=(size, max(5.0, 0.42 * len(rows) + 2.5)))
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_xlabel("predicted by gpudiag")
    ax.set_ylabel("label")
    top = matrix.max() or 1
    for i in range(len(rows)):
        for j in range(len(cols)):
            if matrix[i, j]:
                ax.text(j, i, str(matrix[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if matrix[i, j] > top / 2 else "black")
    macro = result.scores[GPUDIAG].macro_f1
    ax.set_title(f"{ev.corpus.name}: gpudiag, {space} space, macro-F1 {macro:.3f}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_results(ev: Evaluation, out: Path) -> Dict[str, Path]:
    """Writes every output into ``out`` (created if needed); returns them by kind."""
    out.mkdir(parents=True, exist_ok=True)
    files = {"summary": out / "summary.md", "per_class": out / "per_class.csv",
             "predictions": out / "predictions.csv"}
    files["summary"].write_text(summary_markdown(ev) + "\n", encoding="utf-8")
    write_per_class_csv(ev, files["per_class"])
    write_predictions_csv(ev, files["predictions"])
    for space in ev.spaces:
        files[f"confusion_{space}"] = out / f"confusion_{space}.png"
        write_confusion_png(ev, space, files[f"confusion_{space}"])
    return files
