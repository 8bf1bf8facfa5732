"""The teammate's tools, run directly: file tools, Bash, team tools, and `run_tool`'s promise that a
failing tool is an error result for the model, never an exception.

The tests of tests/unit/runtime/tools/test_builtin.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import os
import socket
from pathlib import Path

from swarm.runtime.tools.base import ToolContext
from tests.unit.runtime.tools.test_builtin import (
    ctx,  # noqa: F401 - the fixtures
    err,
    isolated,
    ok,
)


def test_read_refuses_devices_and_sockets(ctx: ToolContext, tmp_path: Path) -> None:
    assert "is a character device" in err(isolated(ctx, "Read", file_path="/dev/zero"))
    (ctx.cwd / "zero").symlink_to("/dev/zero")  # a link does not hide what it points to
    assert "is a character device" in err(isolated(ctx, "Read", file_path="zero"))
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        assert "is a socket" in err(isolated(ctx, "Read", file_path=str(path)))



def test_grep_skips_what_is_not_a_regular_file(ctx: ToolContext) -> None:
    os.mkfifo(ctx.cwd / "pipe")
    (ctx.cwd / "zero").symlink_to("/dev/zero")
    (ctx.cwd / "f.txt").write_text("needle\n")
    assert ok(isolated(ctx, "Grep", pattern="needle")).endswith("f.txt:1:needle")
    assert ok(isolated(ctx, "Grep", pattern="x", path="pipe")) == "(no matches)"
