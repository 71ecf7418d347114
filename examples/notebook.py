# %% [markdown]
# # A directory of finished jobs, in a notebook
#
# Diagnose every log below a directory, read the verdicts as a DataFrame,
# count the classes and draw one run's loss. Run it as a script
# (`python examples/notebook.py [DIR]`) or cell by cell in Jupyter; without a
# DIR it reads the bundled example logs.

# %%
import pathlib
import sys

import matplotlib

if "ipykernel" not in sys.modules:
    matplotlib.use("Agg")  # as a script: draw into files, not windows

import gpudiag

logs = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 and "ipykernel" not in sys.modules
                    else pathlib.Path(__file__).parent.parent / "corpus" / "examples")

# %% Diagnose them all: every core, a progress bar, results in path order.
results = gpudiag.diagnose_many(logs, glob=["*.log"])
frame = gpudiag.to_frame(results)
print(frame[["path", "class", "owner", "confidence", "evidence_line", "steps", "last_loss"]].to_string())

# %% Who has to act, and how often each class came up.
print(frame.groupby("owner")["class"].count().to_string())
gpudiag.plot_classes(frame).figure.savefig("classes.png", bbox_inches="tight")

# %% One run's loss, with the line that decided its verdict.
with_loss = [r for r in results if isinstance(r, gpudiag.Diagnosis) and r.trajectory.readings >= 8]
if with_loss:
    run = max(with_loss, key=lambda r: r.trajectory.readings)
    print(run)
    run.plot().figure.savefig("trajectory.png", bbox_inches="tight")
