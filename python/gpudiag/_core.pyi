"""Type stubs for the native module under the gpudiag package.

The result types' attributes are the fields of docs/diagnosis.schema.json
(``class`` is ``class_``); tests/python/test_schema.py holds them to it.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

class RuleError(ValueError): ...
class InputError(OSError): ...

class Evidence:
    rule: str
    class_: str
    line: int
    offset: int
    text: str
    truncated: bool
    count: int
    values: Dict[str, str]
    rank: Optional[int]
    host: Optional[str]
    severity: Optional[str]

class Finding:
    kind: str
    class_: Optional[str]
    rule: Optional[str]
    line: Optional[int]
    rank: Optional[int]
    reason: str
    message: str
    evidence: Optional[Evidence]

class LossReading:
    step: int
    loss: float
    line: int
    step_reported: bool

class Reading:
    step: int
    value: float
    line: int
    step_reported: bool

class Series:
    readings: int
    first: Optional[Reading]
    last: Optional[Reading]
    lowest: Optional[Reading]
    peak: Optional[Reading]
    series: Tuple[Tuple[int, float], ...]

class Trajectory:
    shape: str
    readings: int
    rank: Optional[int]
    max_step: Optional[int]
    first_epoch: Optional[float]
    first: Optional[LossReading]
    last: Optional[LossReading]
    lowest: Optional[LossReading]
    peak: Optional[LossReading]
    first_non_finite: Optional[LossReading]
    series: Tuple[Tuple[int, float], ...]
    evaluation: Series
    grad_norm: Series
    learning_rate: Series
    loss_scale: Series
    step_time: Series
    throughput: Series

class FailedWorker:
    rank: Optional[int]
    local_rank: Optional[int]
    host: Optional[str]
    time: Optional[str]
    exit_code: Optional[int]
    signal: Optional[int]
    signal_name: Optional[str]
    line: int

class LauncherReport:
    root_cause: Optional[FailedWorker]
    other_failures: Tuple[FailedWorker, ...]
    other_failure_count: int

class Verdict:
    shows: Tuple[str, ...]
    implies: Tuple[str, ...]
    cannot_decide: Tuple[str, ...]

class InputFormat:
    compression: Optional[str]
    container: Optional[str]
    encoding: Optional[str]
    damage: Optional[str]
    damage_at: Optional[int]

class Diagnosis:
    path: Optional[str]
    class_: str
    title: str
    g15: str
    family: str
    owner: str
    confidence: float
    verdict: Verdict
    evidence: Tuple[Evidence, ...]
    findings: Tuple[Finding, ...]
    trajectory: Trajectory
    launcher: Optional[LauncherReport]
    exit_code: Optional[int]
    bytes: int
    lines: int
    input: InputFormat
    def to_json(self, indent: int = 0) -> str: ...
    def to_text(self, color: bool = False) -> str: ...
    def to_brief(self, color: bool = False) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Diagnosis": ...
    def __reduce__(self) -> Any: ...
    def _repr_html_(self) -> str: ...
    def plot(self, ax: Any = None) -> Any: ...

class ClassInfo:
    id: str
    family: str
    owner: str
    g15: str
    title: str
    description: str
    cause: str
    action: str
    rerun: str
    rerun_note: str
    cannot_decide: str
    exit_signals: Tuple[int, ...]
    exit_codes: Tuple[int, ...]
    signal_exit_cascade: bool
    signal_exit_stop: bool
    stop: bool
    tier: str
    survivable: bool
    stall: bool
    resume_failure: bool
    outcome: str
    max_steps: Optional[float]
    source: str

class Rule:
    id: str
    class_: Optional[str]
    g15: str
    role: str
    cascade: bool
    patterns: Tuple[str, ...]
    flags: Tuple[Tuple[str, ...], ...]
    extract: Dict[str, str]
    description: str
    source: str

class NativeRuleSet:
    @property
    def origin(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def cache_outcome(self) -> str: ...
    @property
    def cache_file(self) -> str: ...
    def rules(self) -> Tuple[Rule, ...]: ...
    def classes(self) -> Tuple[ClassInfo, ...]: ...
    def check_examples(self) -> List[Tuple[str, str, str]]: ...

def parse_exit_status(text: str) -> Optional[int]: ...
def load_rules(dir: Optional[str] = None, cache: bool = True,
               cache_dir: Optional[str] = None) -> NativeRuleSet: ...
def diagnose_buffer(rules: NativeRuleSet, buffer: Any, exit_code: Optional[int] = None,
                    chunk_size: int = ..., text_cap: int = ..., scheduler: Optional[str] = None,
                    max_bytes: int = 0) -> Diagnosis: ...
def diagnose_path(rules: NativeRuleSet, path: str, exit_code: Optional[int] = None,
                  chunk_size: int = ..., text_cap: int = ..., scheduler: Optional[str] = None,
                  max_bytes: int = 0) -> Diagnosis: ...
def diagnose_job(rules: NativeRuleSet, paths: Sequence[str], exit_code: Optional[int] = None,
                 chunk_size: int = ..., text_cap: int = ..., name: str = "",
                 scheduler: Optional[str] = None) -> Diagnosis: ...
class FileRun:
    def __init__(self, rules: NativeRuleSet, tasks: Sequence[Tuple[str, Optional[int], Optional[str]]],
                 jobs: int = 1, json: bool = False, text_cap: int = ..., max_bytes: int = 0) -> None: ...
    def take(self, count: int) -> List[Tuple[Optional[Diagnosis], Optional[str]]]: ...
    def take_jsonl(self, count: int, fd: int) -> List[Union[Tuple[str, str, bool], Tuple[None, str]]]: ...
    def close(self) -> None: ...
def list_logs(dir: str, globs: Sequence[str] = ..., hidden: bool = False
              ) -> Tuple[Tuple[str, ...], int, Tuple[str, ...]]: ...
def diagnosis_from_json(json: str) -> Diagnosis: ...
def taxonomy() -> Tuple[ClassInfo, ...]: ...
def version() -> str: ...
def hyperscan_version() -> str: ...
