"""Writes an evaluation out: markdown summary, per-class CSV, predictions, confusion matrices."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Dict, List

from .evaluate import GPUDIAG, REFERENCE, Evaluation, SpaceResult

SPACE_TITLE = {"g15": "g15 space (the published corpus's 15 classes)",
               "fine": "fine space (the taxonomy's class ids)"}


def _ci(lo: float, hi: float) -> str:
    return "n/a" if math.isnan(lo) else f"[{lo:.3f}, {hi:.3f}]"


def _f(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _space_tables(ev: Evaluation, result: SpaceResult) -> List[str]:
    out = [f"### {SPACE_TITLE.get(result.space, result.space)}", "",
           f"{len(result.scores[GPUDIAG].labels)} classes scored, {len(result.truth)} logs.", "",
           "| classifier | macro-F1 | 95% CI | accuracy | McNemar vs keyword |",
           "|---|---|---|---|---|"]
    for c in ev.classifiers:
        s = result.scores[c]
        if c in result.mcnemar:
            m = result.mcnemar[c]
            test = f"p = {_p(m.p_value)} ({m.only_first} vs {m.only_second} discordant)"
        else:
            test = "reference" if c == REFERENCE else ""
        out.append(f"| {c} | {_f(s.macro_f1)} | {_ci(*s.ci)} | {s.accuracy:.3f} | {test} |")
    out.append("")
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
    return out


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
        w.writerow(["id", "source", "split", "log_path", "exit_code"]
                   + [f"label_{s}" for s in spaces]
                   + [f"{c} ({s})" for s in spaces for c in ev.classifiers])
        for i, sample in enumerate(ev.corpus.samples):
            w.writerow([sample.id, sample.source, sample.split or "", sample.log_path,
                        "" if sample.exit_code is None else sample.exit_code]
                       + [ev.spaces[s].truth[i] for s in spaces]
                       + [ev.predictions[c][s][i] for s in spaces for c in ev.classifiers])


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
