"""The teammate's tools against another process: Read refuses a FIFO instead of blocking on it
(the tools run directly in-process: tests/unit/runtime/tools/test_builtin.py)."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import os

from swarm.runtime.tools.base import ToolContext
from tests.unit.runtime.tools.test_builtin import (
    ctx,  # noqa: F401 - the fixtures
    err,
    isolated,
)


def test_read_refuses_a_fifo_instead_of_blocking(ctx: ToolContext) -> None:
    fifo = ctx.cwd / "pipe"
    os.mkfifo(fifo)
    assert "is a FIFO" in err(isolated(ctx, "Read", file_path=str(fifo)))
