"""gpudiag: says why a GPU training job failed, quoting the log lines that show it.

>>> import gpudiag
>>> d = gpudiag.diagnose(b"RuntimeError: CUDA error: device-side assert triggered\\n")
>>> d.class_, d.owner
('cuda_runtime', 'job')
"""

from ._core import InputError, RuleError
from ._diagnose import diagnose, diagnose_job, diagnose_text
from ._many import InputFailure, diagnose_many, plot_classes, to_frame
from ._rules import Rule, RuleSet
from ._types import (Diagnosis, Evidence, FailedWorker, Finding, InputFormat, LauncherReport,
                     LossReading, Reading, Series, Trajectory, Verdict)
from ._taxonomy import ClassInfo, taxonomy
from ._core import version as _native_version

__version__: str = _native_version()

__all__ = [
    "ClassInfo",
    "Diagnosis",
    "Evidence",
    "FailedWorker",
    "Finding",
    "InputError",
    "InputFailure",
    "InputFormat",
    "LauncherReport",
    "LossReading",
    "Reading",
    "Rule",
    "RuleError",
    "RuleSet",
    "Series",
    "Trajectory",
    "Verdict",
    "diagnose",
    "diagnose_job",
    "diagnose_text",
    "diagnose_many",
    "plot_classes",
    "taxonomy",
    "to_frame",
    "__version__",
]
