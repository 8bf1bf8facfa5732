"""core.filecache: a value loaded again only when its file changed (the team file's caches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.filecache import FileCache
from swarm.core.store import write_bytes_atomic


def test_loads_again_only_when_the_file_changed(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_bytes_atomic(path, b"one")
    loads: list[str] = []

    def load() -> str:
        loads.append(path.read_text())
        return loads[-1]

    cache = FileCache(path, load)
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

    cache = FileCache(path, load)
    with pytest.raises(FileNotFoundError):
        cache.get()
    path.write_text("here")
    assert cache.get() == "here"
