"""``python -m gpudiag batch ...``: the batch command (``gpudiag batch`` runs it)."""

import sys

from ._batch import main

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "batch":
        sys.stderr.write("usage: python -m gpudiag batch [options] INPUT...  (see --help)\n")
        sys.exit(2)
    sys.exit(main(sys.argv[2:]))
