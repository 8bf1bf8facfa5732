"""core.filecache: a value loaded again only when its document changed (a file's stat, or a
version such as the team file's on Redis)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.store.disk import write_bytes_atomic
from swarm.core.store.filecache import ChangeCache


def test_loads_again_only_when_the_file_changed(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_bytes_atomic(path, b"one")
    loads: list[str] = []

    def load() -> str:
        loads.append(path.read_text())
        return loads[-1]

    cache = ChangeCache.of_file(path, load)
    assert cache.changed()  # never loaded
    assert cache.get() == "one" and cache.get() == "one"
    assert loads == ["one"] and not cache.changed()
    write_bytes_atomic(path, b"two")  # a store write: a new file in its place
    assert cache.changed()
    assert cache.get() == "two" and loads == ["one", "two"]


def test_a_failed_load_is_not_cached(tmp_path: Path) -> None:
    path = tmp_path / "missing.json"

    def load() -> str:
        return path.read_text()

    cache = ChangeCache.of_file(path, load)
    with pytest.raises(FileNotFoundError):
        cache.get()
    path.write_text("here")
    assert cache.get() == "here"


def test_a_version_key_reloads_when_the_version_moves() -> None:
    version = [1]
    loads: list[int] = []

    def load() -> int:
        loads.append(version[0])
        return version[0] * 10

    cache = ChangeCache(lambda: version[0], load)
    assert cache.get() == 10 and cache.get() == 10 and loads == [1]
    version[0] = 2
    assert cache.changed()
    assert cache.get() == 20 and loads == [1, 2]
