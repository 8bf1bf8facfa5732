"""The store layer: locks that die with their holder, atomic writes, quarantine, modes.

The tests of tests/unit/core/store/test_disk.py that start processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from swarm.core.store import disk as store


def test_reader_never_sees_a_half_written_file(tmp_path: Path) -> None:
    """A writer process rewrites a large file as fast as it can; every read parses."""
    path = tmp_path / "big.json"
    store.write_bytes_atomic(path, json.dumps({"n": -1, "pad": "x" * 200_000}).encode())
    done = tmp_path / "done"
    code = textwrap.dedent(
        f"""
        import json, pathlib
        from swarm.core.store.disk import write_bytes_atomic
        path = pathlib.Path({str(path)!r})
        for n in range(150):
            write_bytes_atomic(path, json.dumps({{"n": n, "pad": "x" * 200_000}}).encode())
        pathlib.Path({str(done)!r}).write_text("ok")
        """
    )
    writer = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[4])
    seen = set()
    try:
        while not done.exists():
            data = json.loads(path.read_bytes())
            assert len(data["pad"]) == 200_000
            seen.add(data["n"])
    finally:
        assert writer.wait(30) == 0
    assert json.loads(path.read_bytes())["n"] == 149
    assert len(seen) > 1  # the reads really overlapped the writes
