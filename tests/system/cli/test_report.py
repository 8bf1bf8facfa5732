"""`swarm report`: a run read back from the team's files, as a terminal table, JSON, or a
self-contained HTML page that a real headless browser renders without errors.

The tests of tests/unit/ops/report/test_build.py that start processes."""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path

import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.ops.approvals import pending_permissions
from swarm.ops.report.build import build_report
from swarm.ops.report.html import render_html
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.support.report_helpers import CHROMIUM, member_table, render, same_numbers, synthetic_run
from tests.unit.ops.report.test_build import EXTERNAL, report_json


def test_report_after_a_two_teammate_run(crew: Crew, tmp_path: Path) -> None:
    """Two real shell teammates, one asking for permission; the page holds every member, every
    task subject and the totals; --json has the same numbers; chromium renders it cleanly."""
    crew.spawn("ada")
    crew.spawn("bob", permission_mode="default")  # its Bash asks the lead
    tasks = [crew.team.tasks.add("count the <work> files", description="$ ls -a | wc -l",
                                 owner="ada"),
             crew.team.tasks.add("say hello & wave", description="$ echo hello-from-bob",
                                 owner="bob"),
             # ada's too: bob, if ada lags, would claim it and wait on a second request
             crew.team.tasks.add("list the work dir", description="$ ls -la", owner="ada")]
    request = wait_until(lambda: [p for p in pending_permissions(crew.team)
                                  if p.message.sender == "bob"], 15,
                         message=f"bob's permission request (log: {crew.log('bob')[-500:]})")[0]
    approved = crew.cli("permissions", "approve", request.as_dict()["request_id"])
    assert approved.returncode == 0, approved.stderr
    wait_until(lambda: all(t.status == "completed" for t in crew.team.tasks.list()), 20,
               message="every task done")
    crew.wait_state("ada", "idle")
    crew.wait_state("bob", "idle")

    page_path = tmp_path / "report.html"
    proc = crew.cli("report", "--html", str(page_path), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    page = page_path.read_text()

    for name in ("team-lead", "ada", "bob"):
        assert f'data-member="{name}"' in page
    for task in tasks:
        assert escape(task.subject) in page
    assert {t["subject"]: t["status"] for t in data["tasks"]} == {
        t.subject: "completed" for t in tasks}
    assert all(t["claimed"] is not None and t["done"] >= t["claimed"] for t in data["tasks"])
    # The table and --json agree, row by row and for the team.
    table = member_table(page)
    assert set(table) == {"team-lead", "ada", "bob", "team"}
    for row in data["members"]:
        same_numbers(table[row["name"]], row)
    same_numbers(table["team"], data["totals"])
    states = {n: read_state(crew.team.name, n) for n in ("ada", "bob")}
    assert data["totals"]["turns"] == sum(s.turns for s in states.values() if s) > 0
    assert data["totals"]["tool_calls"] >= 6  # a Bash, a SendMessage, a TaskUpdate per task
    # bob's timeline shows its wait for permission and that it was approved.
    lanes = {lane["name"]: lane for lane in data["lanes"]}
    waits = [s for s in lanes["bob"]["spans"] if s["kind"] == "permission"]
    assert [s["outcome"] for s in waits] == ["approved"] and "echo hello-from-bob" in waits[0]["label"]
    assert {s["kind"] for s in lanes["ada"]["spans"]} >= {"work", "model", "tool", "task", "idle"}
    assert any("hello-from-bob" in m["text"] for m in data["messages"])
    assert not EXTERNAL.search(page)

    if CHROMIUM is not None:  # .ci/run installs it; a bare dev box still checks the rest
        shown = render(page_path, tmp_path)
        assert shown.console == []
        assert shown.requests == []
        assert shown.screenshot.stat().st_size > 20_000  # a drawn page, not a blank one



@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_page_of_a_huge_run_stays_light_and_renders(team: Team, tmp_path: Path) -> None:
    """10,000 transcript entries: the page draws what lies within a pixel as one bar, so it
    stays small, says so, and a browser renders it without errors."""
    entries = synthetic_run("alpha", "alice", 2500)
    synthetic_run("alpha", "bob", 200, start=time.time() + 50)
    for i in range(1200):
        team.send("team-lead", f"report {i}", sender="alice", summary=f"report {i}")
    report = build_report("alpha")
    assert report.events >= entries + 200 * 4 + 1200
    page = render_html(report)
    assert page.count("<rect") < 6000 and len(page) < 3_000_000
    assert "drawn as" in page and "messages not shown here" in page
    assert page.count("<tr>") <= 400 + 10
    path = tmp_path / "huge.html"
    path.write_text(page)
    shown = render(path, tmp_path)
    assert shown.console == [] and shown.requests == []



def test_a_team_with_no_activity_gets_a_page_that_says_so(team: Team, tmp_path: Path) -> None:
    page_path = tmp_path / "quiet.html"
    proc = run_swarm("report", "--team", "alpha", "--html", str(page_path))
    assert proc.returncode == 0, proc.stderr
    assert "no activity recorded for team alpha" in proc.stdout
    page = page_path.read_text()
    assert 'id="no-activity"' in page and "No tasks." in page and "No messages." in page
    data = report_json("--team", "alpha")
    assert data["empty"] is True and data["totals"]["turns"] == 0



def test_a_deleted_team_or_a_bad_name_is_a_clear_error(team: Team, tmp_path: Path) -> None:
    Team.delete("alpha")
    proc = run_swarm("report", "--team", "alpha", "--html", str(tmp_path / "x.html"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("swarm: error: no team named 'alpha'")
    assert not (tmp_path / "x.html").exists()
    proc = run_swarm("report", "--team", "../alpha")
    assert proc.returncode == 2 and "invalid team name" in proc.stderr
