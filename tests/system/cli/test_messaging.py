"""`swarm inbox` shows what messages say (folded, `--full` for all), structured messages as one
readable line, and `swarm inbox show ID` one message whole, from the live mailbox or the archive.

The tests of tests/unit/cli/test_messaging.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

from swarm.core.records.names import LEAD_NAME
from tests.support.agent_fixtures import Crew
from tests.support.helpers import CaptureFixture, one_line, run_cli
from tests.unit.cli.test_messaging import wide_terminal  # noqa: F401 - the fixtures


def test_send_to_everyone_of_a_team_with_no_members_fails(
        crew: Crew, capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "send", "*", "hello")
    assert code == 1, (out, err)
    assert one_line(err) == (f"swarm: error: team {crew.team.name!r} has no members but"
                             f" {LEAD_NAME}: nobody to send to (`swarm spawn NAME` starts one)")
    assert crew.team.inbox(LEAD_NAME, checked=False).messages() == []
