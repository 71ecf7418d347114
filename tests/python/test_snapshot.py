"""Every diagnosis of the published and the project corpus is byte-for-byte
the JSON recorded in tests/snapshots/ (see snapshot.py): a change that alters
one is deliberate, recorded with `make snapshot`, and its diff names the logs."""

import pytest

import snapshot


@pytest.mark.parametrize("corpus", sorted(snapshot.CORPORA))
def test_diagnoses_match_the_snapshot(cli, corpus):
    folder = snapshot.CORPORA[corpus]
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    diff = snapshot.differences(snapshot.stored(corpus), snapshot.current(cli, folder))
    assert not diff, (f"{len(diff)} diagnoses of the {corpus} corpus differ from tests/snapshots/{corpus}.sha256; "
                      "if the change is meant, record it with `make snapshot`:\n  " + "\n  ".join(diff[:40]))


def test_a_changed_diagnosis_is_named():
    before = {"a.log": "1", "b.log": "2", "c.log": "3"}
    now = {"a.log": "1", "b.log": "9", "d.log": "4"}
    assert snapshot.differences(before, now) == ["changed: b.log", "new: d.log", "gone: c.log"]
