"""gpudiag.eval: scores gpudiag and the published protocol's baselines on a labelled corpus.

>>> from gpudiag.eval import load_corpus, evaluate
>>> ev = evaluate(load_corpus("../shared/corpora/gpualert-eval"))   # doctest: +SKIP
>>> ev.spaces["g15"].scores["gpudiag"].macro_f1                     # doctest: +SKIP
1.0

Needs the extra dependencies of ``pip install .[eval]`` (numpy, scipy,
scikit-learn, matplotlib). The command line is ``python -m gpudiag.eval``.
"""

from .baselines import BASELINES, exit_code_only, keyword, last_exception
from .corpus import Corpus, CorpusError, Sample, default_corpus_path, load_corpus
from .evaluate import GPUDIAG, GPUDIAG_WITH_EXIT, Evaluation, SpaceResult, evaluate
from .metrics import FalseAlarms, McNemar, Score, bootstrap_macro_f1, mcnemar_exact, score
from .report import summary_markdown, write_results

__all__ = [
    "BASELINES", "Corpus", "CorpusError", "Evaluation", "FalseAlarms", "GPUDIAG",
    "GPUDIAG_WITH_EXIT", "McNemar", "Sample", "Score", "SpaceResult", "bootstrap_macro_f1",
    "default_corpus_path", "evaluate", "exit_code_only", "keyword", "last_exception",
    "load_corpus", "mcnemar_exact", "score", "summary_markdown", "write_results",
]
