"""The store layer: locks, atomic writes, quarantine, modes (a lock that dies with its holder, a
real process: tests/system/store/test_disk_locks.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import portalocker
import pytest

from swarm.core.records import base as records
from swarm.core.store import disk as store


class Thing(records.Record, kw_only=True):
    name: str
    count: int = 0


def _lock_is_held(path: Path) -> bool:
    """Try the lock without blocking: True when somebody else holds it."""
    with open(store.lock_path(path), "a+b") as handle:
        try:
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except portalocker.exceptions.LockException:
            return True
        portalocker.unlock(handle)
        return False


def test_write_and_read_model_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "thing.json"
    store.write_model(path, Thing(name="a", count=3))
    assert store.read_model(path, Thing) == Thing(name="a", count=3)
    assert path.stat().st_mode & 0o777 == 0o600


def test_read_missing_file_is_none_without_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert store.read_model(tmp_path / "nope.json", Thing) is None
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "content",
    [b'{"name": "a", "cou', b"", b"\x00\x00\x00", b'{"count": 1}', b"[1, 2]", b'{"name": 5}'],
    ids=["torn", "empty", "nul-bytes", "missing-field", "wrong-shape", "wrong-type"],
)
def test_corrupt_file_is_moved_aside_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / "thing.json"
    path.write_bytes(content)
    assert store.read_model(path, Thing) is None
    assert not path.exists()
    aside = list(tmp_path.glob("thing.json.corrupt-*"))
    assert len(aside) == 1
    assert aside[0].read_bytes() == content  # nothing lost: the bad bytes are kept
    err = capsys.readouterr().err
    assert err.startswith("swarm: warning:")
    assert "thing.json" in err and aside[0].name in err
    assert "Traceback" not in err
    # The next write starts afresh and the aside copy stays.
    store.write_model(path, Thing(name="fresh"))
    assert store.read_model(path, Thing) == Thing(name="fresh")
    assert aside[0].exists()


def test_two_quarantines_keep_both_copies(tmp_path: Path) -> None:
    path = tmp_path / "thing.json"
    for content in (b"{bad one", b"{bad two"):
        path.write_bytes(content)
        assert store.read_model(path, Thing) is None
    kept = sorted(p.read_bytes() for p in tmp_path.glob("thing.json.corrupt-*"))
    assert kept == [b"{bad one", b"{bad two"]


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    for i in range(20):
        store.write_bytes_atomic(path, json.dumps({"i": i}).encode())
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]
    assert json.loads(path.read_bytes()) == {"i": 19}


def test_failed_atomic_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    store.write_bytes_atomic(path, b'{"old": true}')

    class Unserializable(records.Record, kw_only=True):
        value: object

    with pytest.raises(TypeError):  # msgspec: "Encoding objects of type object is unsupported"
        store.write_model(path, Unserializable(value=object()))
    assert path.read_bytes() == b'{"old": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]


def test_locked_creates_a_private_lock_file(tmp_path: Path) -> None:
    path = tmp_path / "box.json"
    with store.locked(path):
        assert _lock_is_held(path)
    assert not _lock_is_held(path)
    assert store.lock_path(path).stat().st_mode & 0o777 == 0o600


def test_ensure_dir_makes_every_new_level_private(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    old = os.umask(0o022)
    try:
        store.ensure_dir(deep)
    finally:
        os.umask(old)
    for level in (tmp_path / "a", tmp_path / "a" / "b", deep):
        assert level.stat().st_mode & 0o777 == 0o700, level
    assert store.ensure_dir(deep) == deep  # idempotent


def test_utcnow_iso_is_utc_with_z() -> None:
    stamp = store.utcnow_iso()
    assert stamp.endswith("Z") and "T" in stamp
    assert len(stamp) == len("2024-01-01T00:00:00.000Z")


def test_a_file_replaced_while_it_was_parsed_is_not_moved_aside(tmp_path: Path) -> None:
    """A lock-free reader that saw a bad version must not quarantine the good one a writer has
    just renamed into place: it reads again instead."""
    from swarm.core.store.disk import _read_parsed, write_bytes_atomic

    target = tmp_path / "box.json"
    target.write_bytes(b"{torn")
    calls = []

    def parse(data: bytes) -> object:
        calls.append(data)
        if len(calls) == 1:  # a writer lands between our read and our verdict
            write_bytes_atomic(target, b'{"ok": true}')
        return json.loads(data)

    assert _read_parsed(target, parse) == {"ok": True}
    assert calls == [b"{torn", b'{"ok": true}']
    assert not list(tmp_path.glob("box.json.corrupt-*"))
