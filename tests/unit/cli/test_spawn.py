"""`swarm spawn` in-process (swarm/cli/spawn.py): bad input is exit 2, one line, nothing registered."""

from __future__ import annotations

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from tests.support.helpers import (
    BREAKOUT,
    one_error,
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


