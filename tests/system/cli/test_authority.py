"""`swarm mode` in-process (swarm/cli/authority.py): its argument named, its choices listed.

The tests of tests/unit/cli/test_authority.py that start processes."""

from __future__ import annotations

from tests.support.agent_fixtures import Crew
from tests.support.helpers import CaptureFixture, one_line, run_cli


def test_a_bad_mode_names_the_argument_and_lists_the_modes(
        crew: Crew, capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "mode", "b1", "yolo")
    assert code == 2
    line = one_line(err)
    assert "{" not in line and "Invalid value for 'MODE': 'yolo' is not one of" in line, line
    assert "'acceptEdits'" in line and "'bypassPermissions'" in line, line
    code, out, _ = run_cli(capsys, "mode", "--help")
    assert "Usage: swarm mode [OPTIONS] NAME MODE" in out, out
    assert "default, acceptEdits, plan, auto or bypassPermissions" in out, out
