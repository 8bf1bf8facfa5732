"""`swarm demo`: an offline team of shell workers doing real work on the current directory.

Creates a team, queues tasks, spawns three `shell` teammates (tmux panes when tmux is there,
hidden otherwise), waits for the tasks, prints who did what, then shuts everything down and
deletes the team, unless `keep`. `swarm demo --lead` instead runs the scripted lead and teammate
of examples/ (shipped in the package as swarm/examples) through `swarm lead --headless`.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from swarm.core.records.task import Task
from swarm.core.team.team import Team
from swarm.ops.member.control import delete_team
from swarm.ops.member.shutdown import shutdown
from swarm.ops.member.spawner import SpawnRequest, spawn
from swarm.ops.member.waiting import wait
from swarm.runtime.models.spec import EXAMPLES

WORKERS = ("ada", "grace", "linus")
LEAD_SCRIPT = EXAMPLES / "lead.yaml"
TEAMMATE_SCRIPT = EXAMPLES / "teammate.yaml"
LEAD_PROMPT = "Survey this directory with a small team and report what you find."


@dataclass
class DemoResult:
    team: str
    backend: str
    backend_reason: str
    rows: list[dict[str, str]]
    seconds: float
    kept: bool


def demo_tasks(root: Path) -> list[tuple[str, str]]:
    """(subject, description with the shell commands) for the work on `root`."""
    tasks = []
    packages = sorted(p.name for p in root.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and any(p.glob("*.py")))
    # From the root, so what they print names files as the person sees them (alpha/a.py),
    # not by an absolute path the results table would have to cut.
    cd = f"cd {shlex.quote(str(root))} &&"
    for name in packages[:4] or ["."]:
        tasks.append((f"count lines of Python in {name}/",
                      f"$ {cd} find {shlex.quote(name)} -name '*.py' -not -path '*/.venv/*'"
                      " | xargs cat | wc -l"))
    tasks.append(("find the five largest Python files",
                  f"$ {cd} find . -name '*.py' -not -path '*/.venv/*' | sed 's|^[.]/||'"
                  " | xargs wc -l | sort -n | tail -6 | head -5"))
    tasks.append(("count TODO markers", f"$ {cd} grep -rn --include='*.py' TODO ."
                  " --exclude-dir=.venv | wc -l"))
    return tasks


def run_demo(root: Path, keep: bool = False, backend: str | None = None,
             say: Callable[[str], None] = print, timeout: float = 120.0) -> DemoResult:

    started = time.monotonic()
    team = Team.create("demo", description="swarm demo: shell workers on " + str(root))
    say(f"created team {team.name}")
    try:
        result = None
        for name in WORKERS:
            result = spawn(team, SpawnRequest(name, model="shell", backend=backend,
                                              cwd=str(root), permission_mode="bypassPermissions"))
            say(f"spawned {result.agent_id} ({result.backend}, pane {result.pane_id})")
        assert result is not None
        for index, (subject, description) in enumerate(demo_tasks(root)):
            # One task assigned to each worker so all three show up; the rest go to whoever
            # is free first (the first spawned would otherwise often take them all).
            owner = WORKERS[index] if index < len(WORKERS) else None
            task = team.tasks.add(subject, description=description, owner=owner)
            say(f"queued task #{task.id}: {subject}" + (f" (for {owner})" if owner else ""))
        wait(team, "tasks-done", timeout)
        rows = summary_rows(team.tasks.list())
        if not keep:
            shutdown(team, [], reason="demo finished", timeout=15, force=True)
    except BaseException:
        if not keep:
            delete_team(team.name, force=True)
        raise
    if not keep:
        delete_team(team.name, force=True)
    return DemoResult(team.name, result.backend, result.backend_reason, rows,
                      time.monotonic() - started, keep)


def summary_rows(tasks: list[Task]) -> list[dict[str, str]]:
    rows = []
    for task in tasks:
        start = datetime.fromisoformat(task.created_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(task.updated_at.replace("Z", "+00:00"))
        lines = [ln for ln in (task.result or "").splitlines() if ln and not ln.startswith("$ ")]
        rows.append({"task": f"#{task.id}", "subject": task.subject, "owner": task.owner or "-",
                     "status": task.status,
                     "seconds": f"{(end - start).total_seconds():.2f}",
                     "result": (lines[-1] if lines else "").strip()})
    return rows
