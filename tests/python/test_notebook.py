"""The package as a notebook user meets it: paths as str, results that
pickle and travel between processes, a repr that fits on a line."""

import concurrent.futures
import math
import pickle

import pytest

import gpudiag
from conftest import EXAMPLES, ROOT

NAN_RUN = b"".join(b"step %d loss %s\n" % (i, b"nan" if i > 5 else b"%.2f" % (3 - i / 10)) for i in range(1, 21))


def corpus_paths(n):
    paths = sorted(str(p) for p in (ROOT / "corpus" / "logs").rglob("*") if p.is_file())
    assert len(paths) >= n
    return paths[:n]


def test_a_diagnosis_pickles_through_its_schema():
    """Issue 18, point 3: pickle and to_dict -> from_dict round-trip, equal."""
    for path in [*map(str, sorted(EXAMPLES.glob("*.log"))), *corpus_paths(60)]:
        d = gpudiag.diagnose(path, exit_code=1)
        assert pickle.loads(pickle.dumps(d)) == d, path
        again = gpudiag.Diagnosis.from_dict(d.to_dict())
        assert again == d and again.to_json() == d.to_json(), path
    nan = gpudiag.diagnose(NAN_RUN)
    assert math.isnan(nan.trajectory.first_non_finite.loss)
    assert pickle.loads(pickle.dumps(nan)) == nan


def test_from_dict_names_what_is_wrong():
    d = gpudiag.diagnose(EXAMPLES / "missing_module.log").to_dict()
    del d["owner"]
    with pytest.raises(ValueError, match="'owner' is missing"):
        gpudiag.Diagnosis.from_dict(d)
    d = gpudiag.diagnose(EXAMPLES / "missing_module.log").to_dict()
    d["evidence"][0]["line"] = "seven"
    with pytest.raises(ValueError, match="'line' is not a count"):
        gpudiag.Diagnosis.from_dict(d)
    with pytest.raises(TypeError, match="takes a dict"):
        gpudiag.Diagnosis.from_dict("{}")  # type: ignore[arg-type]


def test_repr_is_short_and_str_is_the_verdict():
    """Issue 18, point 4: the repr pandas and scikit-learn users expect."""
    path = str(EXAMPLES / "cuda_oom_trainer.log")
    d = gpudiag.diagnose(path)
    assert repr(d) == f"Diagnosis(path={path!r}, class_='cuda_oom', owner='job', confidence=0.75, line=18)"
    assert repr(gpudiag.diagnose(b"")) == "Diagnosis(path=None, class_='unknown', owner='none', confidence=0.00, line=None)"
    assert str(d) == d.to_text() and "shows" in str(d) and "cuda_oom" in d._repr_html_()


def test_notebook_walk_200_paths_in_a_process_pool_pickled_to_disk(tmp_path):
    """Issue 18, done-when: 200 paths given as str, diagnosed in a
    ProcessPoolExecutor, pickled to disk and read back equal."""
    paths = corpus_paths(200)
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(gpudiag.diagnose, paths, chunksize=10))
    assert [d.path for d in results] == paths
    store = tmp_path / "diagnoses.pickle"
    store.write_bytes(pickle.dumps(results))
    back = pickle.loads(store.read_bytes())
    assert back == results == [gpudiag.diagnose(p) for p in paths]
    assert len({d.class_ for d in back}) > 10


def test_every_reading_is_kept_nan_included():
    """Issue 18, point 5: the NaN readings of a run are in its series at their
    steps (integers), in Python and in the JSON; the plot marks them."""
    d = gpudiag.diagnose(ROOT / "corpus" / "logs" / "captured" / "nan_loss-01-plain-python.log")
    t = d.trajectory
    assert t.readings == len(t.series) == 21
    assert all(type(step) is int for step, _ in t.series)
    non_finite = [step for step, loss in t.series if math.isnan(loss)]
    assert len(non_finite) == 15 and non_finite[0] == t.first_non_finite.step
    wire = d.to_dict()["trajectory"]["series"]
    assert [s for s, v in wire if v == "nan"] == non_finite
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    ax = d.plot()
    marked = [line for line in ax.get_lines() if line.get_label().startswith("non-finite loss")]
    assert len(marked) == 1 and list(marked[0].get_xdata()) == non_finite


def test_a_long_series_keeps_its_extremes_and_its_nans():
    """Issue 18, point 5: downsampling never drops the first non-finite
    reading or an extreme, and a NaN stretch stays NaN."""
    lines = [b"step %d loss %.5f" % (s, 9.0 if s == 3333 else 5 - s / 2000) for s in range(1, 8001)]
    lines += [b"step %d loss nan" % s for s in range(8001, 10001)]
    t = gpudiag.diagnose(b"\n".join(lines) + b"\n").trajectory
    steps = {step: loss for step, loss in t.series}
    assert t.readings == 10000 and len(t.series) <= 512 + 5
    for landmark in (t.first, t.last, t.lowest, t.peak, t.first_non_finite):
        assert landmark.step in steps
    assert steps[3333] == 9.0 and math.isnan(steps[8001])
    assert sum(math.isnan(v) for v in steps.values()) >= 0.15 * len(steps)
