"""`swarm team ...` in-process (swarm/cli/team.py)."""

from __future__ import annotations

from tests.support.helpers import CaptureFixture, run_cli


def test_a_team_name_in_capitals_is_lowered_with_a_note(capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "team", "create", "Alpha")
    assert code == 0, err
    assert out.strip() == "alpha"
    assert "swarm: note: team names are lower case: 'Alpha' is team alpha" in err, err

