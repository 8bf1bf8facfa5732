"""SWARM_MAX_TEAMMATES: the most running teammates a team may have when `swarm spawn` (or any
spawn) starts one; past it, exit 2 with one line naming the variable and nothing registered."""

from __future__ import annotations

import pytest

from swarm.core.store import paths
from tests.support.agent_fixtures import Crew, error_lines

HIDDEN = ("--backend", "hidden", "--model", "shell")


def test_a_spawn_past_the_cap_is_refused_and_registers_nothing(
        crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_TEAMMATES", "1")
    first = crew.cli("spawn", "w1", *HIDDEN, "--prompt", "$ echo hi")
    assert first.returncode == 0, first.stderr
    crew.wait_state("w1", "idle", "working")
    second = crew.cli("spawn", "w2", *HIDDEN, "--prompt", "$ echo hi")
    assert second.returncode == 2, second.stderr
    (line,) = error_lines(second)
    assert line.startswith("swarm: error: ") and "SWARM_MAX_TEAMMATES" in line and "1" in line
    assert [m.name for m in crew.team.members()] == ["team-lead", "w1"]
    assert not paths.inbox(crew.team.name, "w2").exists()
    # A teammate that exited no longer counts: the next spawn fits.
    assert crew.cli("kill", "w1").returncode == 0
    crew.wait_state("w1", "exited", "dead")
    third = crew.cli("spawn", "w3", *HIDDEN, "--prompt", "$ echo hi")
    assert third.returncode == 0, third.stderr


def test_a_cap_that_is_not_a_number_is_one_line(crew: Crew,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_TEAMMATES", "many")
    proc = crew.cli("spawn", "w1", *HIDDEN, "--prompt", "$ echo hi")
    assert proc.returncode == 2
    (line,) = error_lines(proc)
    assert "SWARM_MAX_TEAMMATES" in line
    assert [m.name for m in crew.team.members()] == ["team-lead"]
