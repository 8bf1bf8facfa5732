"""`swarm report` through the executable: a run read back from the team's files, a lead's
transcript and members no longer in the team, and an unwritable page path is a clear error
(in-process: tests/unit/ops/report/test_build.py)."""

from __future__ import annotations

from pathlib import Path

from swarm.core.team.team import Team
from tests.support.cli_runner import run_swarm
from tests.support.report_helpers import synthetic_run
from tests.unit.ops.report.test_build import report_json


def test_an_unwritable_page_path_is_a_clear_error(team: Team, tmp_path: Path) -> None:
    proc = run_swarm("report", "--team", "alpha", "--html", str(tmp_path / "no" / "r.html"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"swarm: error: cannot write the report to {tmp_path / 'no' / 'r.html'}: "
        "No such file or directory"]


def test_the_report_reads_a_lead_transcript_and_members_no_longer_in_the_team(team: Team) -> None:
    """A `swarm lead` run records the lead under agents/team-lead/; a removed member's files
    still count."""
    synthetic_run("alpha", "team-lead", 2)
    synthetic_run("alpha", "carol", 1)  # never in the team file (or removed from it)
    team.remove_member("bob")
    data = report_json("--team", "alpha")
    names = [m["name"] for m in data["members"]]
    assert names == ["team-lead", "alice", "carol"]
    lead = data["members"][0]
    assert lead["turns"] == 4 and lead["tool_calls"] == 2 and lead["cost_usd"] == 0.002
    assert data["members"][2]["state"] == "idle"
    assert data["totals"]["tool_calls"] == 3
