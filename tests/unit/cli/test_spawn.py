"""`swarm spawn` in-process (swarm/cli/spawn.py): bad input is exit 2, one line, nothing registered."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from tests.support.agent_fixtures import Crew
from tests.support.helpers import (
    BREAKOUT,
    CaptureFixture,
    one_error,
    one_line,
    run_cli,
)
from tests.support.helpers import run_cli as run


def test_spawn_with_a_bad_colour_is_exit_2_and_registers_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    team = Team.create("alpha")
    code, _, err = run(capsys, "spawn", "w", "--team", "alpha", "--model", "shell",
                       "--backend", "hidden", "--color", BREAKOUT)
    assert code == 2
    one_error(err, "colour")
    assert [m.name for m in team.members()] == [LEAD_NAME]
    with pytest.raises(BadInputError):
        team.add_member("w", color=BREAKOUT)  # the core refuses it too (SpawnTeammate's way)
    assert [m.name for m in team.members()] == [LEAD_NAME]


def test_an_untrusted_projects_definition_is_named_with_swarm_trust(
        crew: Crew, capsys: CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    (project / ".swarm" / "agents").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    definition = project / ".swarm" / "agents" / "iso.md"
    definition.write_text("---\nname: iso\ndescription: isolated\n---\nWork alone.\n")
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "spawn", "w1", "--agent-type", "iso", "--model", "shell")
    assert code == 2, (out, err)
    line = one_line(err)
    assert line.startswith("swarm: error: unknown agent type 'iso'"), line
    assert (f"{definition} is ignored: the project is not trusted (`swarm trust` reviews"
            " it)") in line, line

