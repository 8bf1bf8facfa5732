"""`swarm wait` and `swarm shutdown` in-process (swarm/cli/lifecycle.py): bad input and nothing to wait for.

The tests of tests/unit/cli/test_lifecycle.py that start processes."""

from __future__ import annotations

import time

import pytest

from tests.support.agent_fixtures import Crew
from tests.support.helpers import CaptureFixture, one_line, run_cli


def test_waiting_for_the_tasks_of_a_team_with_none_returns_at_once(
        crew: Crew, capsys: CaptureFixture) -> None:
    began = time.monotonic()
    code, out, err = run_cli(capsys, "wait", "--until", "tasks-done", "--timeout", "30")
    assert time.monotonic() - began < 10  # not the 30 s timeout
    assert code == 1, (out, err)
    assert one_line(err) == (f"swarm: error: team {crew.team.name!r} has no tasks: nothing to"
                             " wait for (`swarm tasks add` creates one)")



@pytest.mark.parametrize("command", [("wait", "--until", "idle"), ("shutdown", "--all")])
def test_a_negative_timeout_is_refused_naming_the_option(
        crew: Crew, capsys: CaptureFixture, command: tuple[str, ...]) -> None:
    code, out, err = run_cli(capsys, *command, "--timeout", "-5")
    assert code == 2, (out, err)
    line = one_line(err)
    assert line.startswith("swarm: error: Invalid value for '--timeout': -5"), line
