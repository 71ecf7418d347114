"""The Dask path, on a real local cluster of two worker processes, against the sequential one."""

import gzip
import shutil

import pandas as pd
import pytest
from distributed import Client, LocalCluster

import gpudiag
import gpudiag.dask
from conftest import EXAMPLES, ROOT


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


@pytest.fixture()
def logs(tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("*.jsonl"))
    (root / "packed.log.gz").write_bytes(gzip.compress((EXAMPLES / "nccl_timeout_rank3.log").read_bytes()))
    return root


def test_the_bag_equals_the_sequential_results(client, logs):
    bag = gpudiag.dask.diagnose_bag(logs, npartitions=4)
    assert bag.npartitions == 4
    distributed = bag.compute()
    sequential = [d.to_dict() for d in gpudiag.diagnose_many(logs, jobs=1, progress=False)]
    assert distributed == sequential
    workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2  # two processes did the work


def test_the_frame_equals_to_frame(client, logs, tmp_path):
    missing = str(tmp_path / "gone.log")
    sources = [str(p) for p in sorted(logs.iterdir())] + [missing]
    distributed = gpudiag.dask.diagnose_frame(sources, npartitions=3).compute().reset_index(drop=True)
    sequential = gpudiag.to_frame(gpudiag.diagnose_many(sources, progress=False))
    pd.testing.assert_frame_equal(distributed, sequential)
    assert distributed.iloc[-1]["path"] == missing and "No such file" in distributed.iloc[-1]["error"]


def test_a_rules_directory_is_loaded_on_each_worker(client, logs):
    results = gpudiag.dask.diagnose_bag([str(logs / "segfault_srun.log")], rules=ROOT / "rules").compute()
    assert [r["class"] for r in results] == ["segfault"]
