"""`swarm report`: a run read back from the team's files, as a terminal table, JSON, or a
self-contained HTML page that a real headless browser renders without errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from swarm.core.store import paths
from swarm.core.store.disk import utcnow_iso
from swarm.core.team.team import Team
from swarm.ops.report.build import build_report
from swarm.ops.report.html import render_html
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.support.report_helpers import synthetic_run

EXTERNAL = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:|//)|url\(|@import|<script|<link""",
                      re.IGNORECASE)


def report_json(*args: str) -> dict:  # type: ignore[type-arg]
    proc = run_swarm("report", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_a_truncated_transcript_line_is_skipped_and_noted(team: Team, tmp_path: Path) -> None:
    synthetic_run("alpha", "alice", 3)
    path = paths.agent_transcript("alpha", "alice")
    lines = path.read_text().splitlines()
    # A line cut short in the middle (a copy gone wrong) and a torn last line (a crash).
    lines[3] = lines[3][:25]
    path.write_text("\n".join(lines) + "\n" + lines[5][:30])
    report = build_report("alpha")
    assert any("alice: skipped 2 unreadable transcript line(s) (4, 14)" in n for n in report.notes)
    [alice] = [r for r in report.members if r.name == "alice"]
    assert alice.tool_calls == 3 and alice.turns == 6  # the rest is all there
    page = render_html(report)
    assert "skipped 2 unreadable transcript line(s)" in page


def test_a_task_ends_when_its_owner_completed_it_not_when_its_file_last_changed(
        team: Team) -> None:
    """A task's file changes again after completion (a task it blocks is added or moved): the
    bar ends at the owner's TaskUpdate, read from the transcript."""
    from swarm.core.team.transcript import Transcript

    task = team.tasks.add("build it", owner="alice")
    log = Transcript(paths.agent_transcript("alpha", "alice"))
    log.event("started", pid=1, model="shell")
    log.message({"role": "user", "content": [{"type": "text", "text":
                 f'<task-assignment id="{task.id}" subject="build it">\n</task-assignment>'}]})
    log.message({"role": "assistant", "content": [{"type": "tool_use", "id": "u1",
                 "name": "TaskUpdate", "input": {"task_id": task.id, "status": "completed"}}]})
    log.message({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1",
                                              "content": "done"}]})
    team.tasks.update(task.id, status="completed")
    completed_at = build_report("alpha").tasks[0].done
    before = team.tasks.get(task.id).updated_at
    wait_until(lambda: utcnow_iso() > before)  # the clock moves past it (milliseconds)
    team.tasks.add("ship it", blocked_by=[task.id])
    assert team.tasks.get(task.id).updated_at > before  # the file did move on
    [row, _] = build_report("alpha").tasks
    assert row.done is not None and row.claimed is not None and row.done == completed_at
