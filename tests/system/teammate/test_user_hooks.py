"""Hooks: settings (user + project, validation), and running them (stdin JSON, exit codes,
timeouts, a hook that hangs or cannot start). Real `bash` processes, real files.

The tests of tests/unit/runtime/extensions/test_user_hooks.py that start processes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.helpers import process_gone, wait_until
from tests.unit.runtime.extensions.test_user_hooks import hook, runner

pytestmark = pytest.mark.usefixtures("trust_projects")



def test_a_hanging_hook_is_killed_with_its_children_at_its_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    warnings: list[str] = []
    command = f"sleep 300 & echo $! > {pids}; echo $$ >> {pids}; wait"
    start = time.monotonic()
    result = runner(tmp_path, [hook("PreToolUse", command, timeout=1)], warnings).run(
        "PreToolUse", tool_name="Bash", tool_input={})
    assert time.monotonic() - start < 10
    assert not result.blocked
    assert len(warnings) == 1 and "timed out after 1s" in warnings[0]
    for pid in map(int, pids.read_text().split()):
        wait_until(lambda p=pid: process_gone(p), 5)
