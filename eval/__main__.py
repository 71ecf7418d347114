"""python -m gpudiag.eval [CORPUS] [--out DIR] ...: score gpudiag and the baselines."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

import gpudiag

from .corpus import DEFAULT_CORPUS, MANIFEST, CorpusError, default_corpus_path, load_corpus
from .evaluate import evaluate
from .report import summary_markdown, write_results

EPILOG = f"""\
CORPUS is a folder holding {MANIFEST} (the published layout: id, mode, log_path,
source, true_exit_code; a 'class' field adds scoring in the fine taxonomy and
the false-alarm rate on healthy logs; a 'split' field adds a breakdown by split).
Default: $GPUDIAG_EVAL_CORPUS, else the published 474-log corpus at
{DEFAULT_CORPUS} beside the project checkout (the one the package was built
from, else the working directory or a folder above it).

Written to --out: summary.md (the tables printed at the end, what each metric
counts, and scikit-learn's classification_report for each classifier),
per_class.csv, predictions.csv (every classifier's label for every log, and
gpudiag's confidence and deciding rule) and confusion_<space>.png.

exit status: 0 scored, 1 some logs could not be read (named; counted as misses),
2 the corpus or the options are unusable.

examples:
  python -m gpudiag.eval
  python -m gpudiag.eval corpus --name project --out results/project
"""


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpudiag.eval",
        description="Scores gpudiag and the published protocol's three baselines (keyword, "
                    "exit code, last exception name) on a labelled corpus: per-class "
                    "precision/recall/F1, macro-F1 with a bootstrap 95% interval, McNemar's "
                    "exact test against the keyword baseline, breakdowns by source and split.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, help="corpus root (see below)")
    parser.add_argument("--name", help="the corpus's name in the report (default: its folder's name)")
    parser.add_argument("--out", type=Path,
                        help="results folder (created if needed; default results/<corpus name>)")
    parser.add_argument("--rules", type=Path, help="a rules directory instead of the shipped rules")
    parser.add_argument("--no-exit-codes", action="store_true",
                        help="leave out the gpudiag run that is also given each log's exit code")
    parser.add_argument("--resamples", type=int, default=1000,
                        help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    args = parser.parse_args(argv)
    if args.resamples < 0:
        parser.error("--resamples must not be negative")

    try:
        corpus = load_corpus(args.corpus if args.corpus is not None else default_corpus_path(),
                             args.name)
    except CorpusError as e:
        print(f"gpudiag.eval: {e}", file=sys.stderr)
        return 2
    try:
        rules = gpudiag.RuleSet(args.rules) if args.rules else None
    except (gpudiag.RuleError, OSError) as e:
        print(f"gpudiag.eval: {e}", file=sys.stderr)
        return 2

    result = evaluate(corpus, rules, with_exit_codes=not args.no_exit_codes,
                      resamples=args.resamples, seed=args.seed, show_progress=not args.quiet)
    out = args.out or Path("results") / corpus.name
    files = write_results(result, out)
    for sample, why in result.errors:
        print(f"gpudiag.eval: {sample}: cannot read {why}", file=sys.stderr)
    print(summary_markdown(result))
    print(f"written to {out}: " + ", ".join(p.name for p in files.values()), file=sys.stderr)
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
