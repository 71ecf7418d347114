"""Runs gpudiag and the baselines over a corpus and scores every one of them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import gpudiag

from .baselines import BASELINES
from .corpus import Corpus, read_log
from .metrics import (FalseAlarms, McNemar, Score, false_alarms, group_by, mcnemar_exact,
                      score, scored_labels)
from .progress import Progress

GPUDIAG = "gpudiag"
GPUDIAG_WITH_EXIT = "gpudiag + exit code"
REFERENCE = "keyword"  #: the baseline every gpudiag variant is tested against
UNREADABLE = "unreadable"  #: the prediction of every classifier for a log that cannot be read


@dataclass
class SpaceResult:
    """Every classifier scored in one label space (g15 or fine)."""

    space: str
    truth: List[str]
    scores: Dict[str, Score]
    mcnemar: Dict[str, McNemar]  #: gpudiag variants against the keyword baseline
    by_group: Dict[str, Dict[str, Dict[str, Score]]]  #: "source"/"split" -> group -> classifier
    false_alarms: Dict[str, FalseAlarms] = field(default_factory=dict)  #: fine space only


@dataclass(frozen=True)
class Decision:
    """What decided one of gpudiag's predictions."""

    confidence: float
    rule: str  #: the deciding rule's id; empty when no line decided


@dataclass
class Evaluation:
    corpus: Corpus
    classifiers: Tuple[str, ...]
    predictions: Dict[str, Dict[str, List[str]]]  #: classifier -> space -> label per sample
    spaces: Dict[str, SpaceResult]
    errors: List[Tuple[str, str]]  #: (sample id, why its log could not be read)
    resamples: int
    seed: int
    seconds: float
    decisions: Dict[str, List[Optional[Decision]]] = field(default_factory=dict)  #: gpudiag variants, per sample


Predictions = Dict[str, Dict[str, List[str]]]


def _predict(corpus: Corpus, rules: Optional[gpudiag.RuleSet], with_exit_codes: bool, show_progress: bool
             ) -> Tuple[Predictions, Dict[str, List[Optional[Decision]]], List[Tuple[str, str]]]:
    variants = [GPUDIAG] + ([GPUDIAG_WITH_EXIT] if with_exit_codes else [])
    classifiers = variants + list(BASELINES)
    predictions: Predictions = {c: {"g15": [], "fine": []} for c in classifiers}
    decisions: Dict[str, List[Optional[Decision]]] = {c: [] for c in variants}
    errors: List[Tuple[str, str]] = []
    progress = Progress(len(corpus.samples), f"scoring {corpus.name}", enabled=show_progress)

    def put(name: str, g15: str, fine: str) -> None:
        predictions[name]["g15"].append(g15)
        predictions[name]["fine"].append(fine)

    def put_diagnosis(name: str, d: gpudiag.Diagnosis) -> None:
        put(name, d.g15, d.class_)
        decisions[name].append(Decision(d.confidence, d.evidence[0].rule if d.evidence else ""))

    for i, sample in enumerate(corpus.samples, 1):
        try:
            data = read_log(sample)
        except OSError as e:
            errors.append((sample.id, f"{sample.log_path}: {e.strerror or e}"))
            for c in classifiers:
                put(c, UNREADABLE, UNREADABLE)
            for c in variants:
                decisions[c].append(None)
            progress.update(i, sample.id)
            continue
        put_diagnosis(GPUDIAG, gpudiag.diagnose(data, rules=rules))
        if with_exit_codes:
            put_diagnosis(GPUDIAG_WITH_EXIT, gpudiag.diagnose(data, exit_code=sample.exit_code, rules=rules))
        text = data.decode("utf-8", errors="replace")
        for name, baseline in BASELINES.items():
            label = baseline(text, sample.exit_code)
            put(name, label, label)
        progress.update(i, sample.id)
    progress.close()
    return predictions, decisions, errors


def _score_space(space: str, truth: Sequence[str], corpus: Corpus, predictions: Predictions,
                 resamples: int, seed: int) -> SpaceResult:
    labels = scored_labels(truth)
    y = np.asarray(truth)
    scores = {c: score(truth, p[space], labels, resamples, seed) for c, p in predictions.items()}
    right = {c: y == np.asarray(p[space]) for c, p in predictions.items()}
    mcnemar = {c: mcnemar_exact(right[c], right[REFERENCE])
               for c in predictions if c.startswith(GPUDIAG)}
    by_group: Dict[str, Dict[str, Dict[str, Score]]] = {}
    for kind, keys in (("source", [s.source for s in corpus.samples]),
                       ("split", [s.split for s in corpus.samples])):
        groups = group_by(keys)
        if kind == "source" and len(groups) < 2:
            continue
        for group, idx in groups.items():
            group_truth = [truth[i] for i in idx]
            by_group.setdefault(kind, {})[group] = {
                c: score(group_truth, [p[space][i] for i in idx], scored_labels(group_truth),
                         resamples, seed)
                for c, p in predictions.items()}
    result = SpaceResult(space, list(truth), scores, mcnemar, by_group)
    if space == "fine":
        ids = [s.id for s in corpus.samples]
        result.false_alarms = {c: false_alarms(ids, truth, p["fine"])
                               for c, p in predictions.items()}
    return result


def evaluate(corpus: Corpus, rules: Optional[gpudiag.RuleSet] = None, *,
             with_exit_codes: bool = True, resamples: int = 1000, seed: int = 0,
             show_progress: bool = False) -> Evaluation:
    """Scores gpudiag and the baselines on ``corpus``.

    In the g15 space always; in the fine space too when every sample has a
    ``class`` label. ``with_exit_codes`` adds a gpudiag run that is also given
    each log's true exit code.
    """
    start = time.monotonic()
    with_exit_codes = with_exit_codes and any(s.exit_code is not None for s in corpus.samples)
    predictions, decisions, errors = _predict(corpus, rules, with_exit_codes, show_progress)
    spaces = {"g15": _score_space("g15", [s.mode for s in corpus.samples], corpus, predictions,
                                  resamples, seed)}
    if corpus.has_fine_labels:
        spaces["fine"] = _score_space("fine", [s.fine for s in corpus.samples], corpus,
                                      predictions, resamples, seed)
    return Evaluation(corpus, tuple(predictions), predictions, spaces, errors, resamples, seed,
                      time.monotonic() - start, decisions)
