"""The on-disk cache of compiled rules under stress: a cache that cannot be
written, a disk that fills, a cache path that is a file, many processes
storing at once. A bad cache is rebuilt or bypassed, never trusted, and never
stops a diagnosis."""

import json
import os
import re
import resource
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

RULES = '{"rules": [{"id": "site.quota", "class": "data_error", "patterns": ["quota exceeded on /scratch"]}]}'


@pytest.fixture
def rules_dir(tmp_path):
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "10-site.json").write_text(RULES)
    return folder


def check(cli, rules_dir, cache, preexec_fn=None):
    env = dict(os.environ, GPUDIAG_CACHE_DIR=str(cache))
    r = subprocess.run([cli, "rules", "check", str(rules_dir)], capture_output=True, env=env, timeout=120,
                       preexec_fn=preexec_fn)
    found = re.search(rb"\(cache: ([^)]*)\)", r.stdout)
    return r.returncode, found.group(1).decode() if found else r.stdout + r.stderr


def diagnoses(cli, rules_dir, cache, log):
    env = dict(os.environ, GPUDIAG_CACHE_DIR=str(cache))
    r = subprocess.run([cli, "diagnose", "-f", "jsonl", "--rules", str(rules_dir), str(log)],
                       capture_output=True, env=env, timeout=120)
    return r.returncode, json.loads(r.stdout)["class"]


def test_a_cache_path_that_is_a_file_is_bypassed(cli, rules_dir, tmp_path):
    taken = tmp_path / "cache"
    taken.write_text("not a directory")
    assert check(cli, rules_dir, taken) == (0, "compiled, not stored")
    log = tmp_path / "job.log"
    log.write_text("error: quota exceeded on /scratch\n")
    assert diagnoses(cli, rules_dir, taken, log) == (0, "data_error")
    assert taken.read_text() == "not a directory"


def test_a_read_only_cache_is_bypassed(cli, rules_dir):
    # /proc/self cannot be written to, not even by root.
    assert check(cli, rules_dir, "/proc/self/gpudiag-cache") == (0, "compiled, not stored")


def test_a_full_disk_leaves_no_half_written_file(cli, rules_dir, tmp_path):
    cache = tmp_path / "cache"

    def small_disk():
        # Writes past 512 bytes fail (EFBIG), as they would on a full disk.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    assert check(cli, rules_dir, cache, preexec_fn=small_disk) == (0, "compiled, not stored")
    assert not cache.exists() or not any(cache.iterdir())
    # With room again, the set is stored and then found.
    assert check(cli, rules_dir, cache) == (0, "compiled and stored")
    assert check(cli, rules_dir, cache) == (0, "hit")


def test_many_processes_storing_at_once_leave_one_good_file(cli, rules_dir, tmp_path):
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(lambda _: check(cli, rules_dir, cache), range(16)))
    assert all(code == 0 for code, _ in outcomes), outcomes
    assert {o for _, o in outcomes} <= {"compiled and stored", "hit"}
    # Written under private names and renamed: no temporary is left, and what
    # stays is whole.
    names = sorted(p.name for p in cache.iterdir())
    assert len(names) == 1 and names[0].endswith(".hsdb") and ".tmp." not in names[0]
    assert check(cli, rules_dir, cache) == (0, "hit")


def test_a_cache_file_swapped_while_in_use_is_checked_again(cli, rules_dir, tmp_path):
    cache = tmp_path / "cache"
    assert check(cli, rules_dir, cache) == (0, "compiled and stored")
    (stored,) = list(cache.iterdir())
    other = tmp_path / "other"
    other.mkdir()
    (other / "10-site.json").write_text(RULES.replace("quota exceeded", "disk quota hit"))
    assert check(cli, other, cache)[0] == 0
    swapped = [p for p in cache.iterdir() if p != stored][0]
    os.replace(swapped, stored)  # another rule set's database under this set's name
    assert check(cli, rules_dir, cache) == (0, "compiled and stored")
    log = tmp_path / "job.log"
    log.write_text("quota exceeded on /scratch\n")
    assert diagnoses(cli, rules_dir, cache, log) == (0, "data_error")
