"""Scores of one classifier against the labels, as evaluation.md defines them.

Per-class figures and macro-F1 come from scikit-learn. A prediction outside the
scored label set (``generic``, ``unknown``, a class the corpus does not hold)
counts as a miss for the true class and a false positive for no class, which is
what scikit-learn does when ``labels`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
from scipy.stats import binomtest
from sklearn.metrics import f1_score, precision_recall_fscore_support

#: Predictions that do not name a failure: they never count as a false alarm.
NOT_A_FAILURE = frozenset({"healthy", "unknown", "generic"})


@dataclass(frozen=True)
class ClassScore:
    label: str
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True)
class Score:
    labels: Tuple[str, ...]
    per_class: Tuple[ClassScore, ...]
    macro_f1: float
    accuracy: float  #: fraction predicted exactly (the protocol's micro-F1)
    ci: Tuple[float, float]  #: bootstrap 95% interval of macro-F1
    n: int


def score(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str],
          resamples: int = 1000, seed: int = 0) -> Score:
    labels = tuple(labels)
    p, r, f, s = precision_recall_fscore_support(
        y_true, y_pred, labels=list(labels), zero_division=0)
    macro = (float(f1_score(y_true, y_pred, labels=list(labels), average="macro", zero_division=0))
             if labels else float("nan"))
    accuracy = float(np.mean(np.asarray(y_true) == np.asarray(y_pred))) if len(y_true) else 0.0
    per_class = tuple(ClassScore(lab, float(pi), float(ri), float(fi), int(si))
                      for lab, pi, ri, fi, si in zip(labels, p, r, f, s))
    ci = bootstrap_macro_f1(y_true, y_pred, labels, resamples, seed)
    return Score(labels, per_class, macro, accuracy, ci, len(y_true))


def resample_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """The published resamples: default_rng(seed), integers(0, n, n) once per resample."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, n, n) for _ in range(resamples)]) if n else np.zeros((0, 0), int)


def macro_f1_of_resamples(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str],
                          indices: np.ndarray) -> np.ndarray:
    """Macro-F1 of every resample at once.

    Each resample's mean runs over the scored labels it holds as a label or a
    prediction, which is scikit-learn's ``f1_score(..., labels=<those>,
    average="macro")`` (tests check it): a class that a small resample happens
    to leave out is not scored as F1 = 0. On the published corpus every
    resample holds all 15 classes, so this is the published interval. F1 is
    2·TP / (support + predicted); a thousand resamples cost three matrix
    products instead of a thousand calls.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    weights = np.zeros((len(indices), len(y_true)))
    rows = np.repeat(np.arange(len(indices)), indices.shape[1] if indices.size else 0)
    np.add.at(weights, (rows, indices.ravel()), 1.0)
    is_true = np.stack([y_true == lab for lab in labels], axis=1).astype(float)
    is_pred = np.stack([y_pred == lab for lab in labels], axis=1).astype(float)
    tp = weights @ (is_true * is_pred)
    denominator = weights @ is_true + weights @ is_pred
    present = denominator > 0
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=present)
    return f1.sum(axis=1) / np.maximum(present.sum(axis=1), 1)


def bootstrap_macro_f1(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str],
                       resamples: int = 1000, seed: int = 0) -> Tuple[float, float]:
    if not len(y_true) or not resamples or not labels:
        return (float("nan"), float("nan"))
    values = macro_f1_of_resamples(y_true, y_pred, labels,
                                   resample_indices(len(y_true), resamples, seed))
    lo, hi = np.percentile(values, [2.5, 97.5])
    return (float(lo), float(hi))


@dataclass(frozen=True)
class McNemar:
    only_first: int  #: samples the first classifier gets right and the second wrong
    only_second: int
    p_value: float  #: exact two-sided binomial test on the discordant pairs


def mcnemar_exact(first_correct: Sequence[bool], second_correct: Sequence[bool]) -> McNemar:
    a, b = np.asarray(first_correct, bool), np.asarray(second_correct, bool)
    only_first, only_second = int(np.sum(a & ~b)), int(np.sum(~a & b))
    discordant = only_first + only_second
    p = binomtest(only_first, discordant, 0.5).pvalue if discordant else 1.0
    return McNemar(only_first, only_second, float(p))


@dataclass(frozen=True)
class FalseAlarms:
    healthy: int  #: healthy logs in the corpus
    alarms: int  #: of them, given a failure class
    ids: Tuple[str, ...]

    @property
    def rate(self) -> Optional[float]:
        return self.alarms / self.healthy if self.healthy else None


def false_alarms(ids: Sequence[str], fine_truth: Sequence[str],
                 predictions: Sequence[str]) -> FalseAlarms:
    flagged = [i for i, t, p in zip(ids, fine_truth, predictions)
               if t == "healthy" and p not in NOT_A_FAILURE]
    return FalseAlarms(sum(t == "healthy" for t in fine_truth), len(flagged), tuple(flagged))


def scored_labels(y_true: Sequence[str]) -> Tuple[str, ...]:
    """The classes a corpus holds, less those that name no failure class of the space."""
    return tuple(sorted(set(y_true) - {"generic", "unknown"}))


def group_by(keys: Sequence[Optional[str]]) -> Dict[str, np.ndarray]:
    groups: Dict[str, list] = {}
    for i, k in enumerate(keys):
        if k is not None:
            groups.setdefault(k, []).append(i)
    return {k: np.asarray(v) for k, v in sorted(groups.items())}
