"""File scopes on tasks (enforced before Write/Edit in every mode) and overlapping writes (one
`file_conflict` to the lead per path): the decisions directly, the CLI and tools, and real
`swarm agent` shell teammates.

The tests of tests/unit/core/team/test_scopes.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from swarm.core.records.protocol import FileConflict
from swarm.core.store import paths
from swarm.core.team.overlaps import overlapping
from swarm.core.team.team import Team
from swarm.ops.approvals import pending_permissions
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.unit.core.team.test_scopes import (
    conflicts,
    work,  # noqa: F401 - the fixtures
)


def test_tasks_add_files_warns_for_a_glob_matching_nothing(team: Team, work: Path) -> None:
    (work / "src" / "api" / "x.py").write_text("")
    proc = run_swarm("tasks", "add", "api", "--files", "src/**", "--files", "nope/**",
                     "--team", team.name, "--json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"] == ["src/**", "nope/**"]
    assert proc.stderr.splitlines() == [
        f"swarm: warning: --files 'nope/**' matches nothing under {work} yet (kept as given)"]
    shown = run_swarm("tasks", "show", "1", "--team", team.name)
    assert "files: src/**, nope/**" in shown.stdout.splitlines()
    bad = run_swarm("tasks", "add", "x", "--files", "", "--team", team.name)
    assert bad.returncode == 2 and "must not be empty" in bad.stderr



def test_concurrent_first_overlap_is_reported_once(team: Team, work: Path) -> None:
    """Several processes write the same new path at once: one message, every writer listed."""
    names = [f"w{i}" for i in range(6)]
    for name in names:
        team.add_member(name)
    code = ("import sys; from pathlib import Path; from swarm.core.team.team import Team; "
            "from swarm.core.team.overlaps import record_write; "
            "record_write(Team(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))")
    procs = [subprocess.Popen([sys.executable, "-c", code, team.name, n, str(work / "hot.txt")])
             for n in names]
    assert all(p.wait(30) == 0 for p in procs)
    (message,) = conflicts(team)
    assert len(message.members) >= 2
    assert sorted(overlapping(team.name)[os.path.realpath(work / "hot.txt")]) == names



def test_a_scoped_task_denies_a_write_outside_it_in_bypass_mode(crew: Crew) -> None:
    crew.spawn("w", permission_mode="bypassPermissions")
    crew.wait_state("w", "idle")
    crew.team.tasks.add("api work", owner="w", files=["src/**"], description=(
        "```write docs/notes.md\nnot mine\n```\n```write src/api.py\nprint('mine')\n```"))
    crew.wait_idle_notes("w", 1)
    assert not (crew.workdir / "docs" / "notes.md").exists()
    assert (crew.workdir / "src" / "api.py").read_text() == "print('mine')\n"
    task = crew.team.tasks.get("1")
    assert task.status == "failed"
    denied = crew.workdir / "docs" / "notes.md"
    assert (f"write docs/notes.md\npermission denied: {denied} is outside the file scope of "
            "task(s) #1 owned by w (src/**): write inside it, or finish the task first") in (
                task.result or "")
    assert "write src/api.py\nwrote 14 characters" in (task.result or "")



def test_two_shell_teammates_writing_one_file_give_one_file_conflict(crew: Crew) -> None:
    target = crew.workdir / "shared.txt"
    for name in ("a", "b"):
        crew.spawn(name, f"```write shared.txt\nfrom {name}\n```")
        crew.wait_idle_notes(name, 1)
    assert target.read_text() == "from b\n"
    wait_until(lambda: conflicts(crew.team), 5, message="a file_conflict for the lead")
    crew.send("a", "```write shared.txt\nfrom a again\n```")
    crew.wait_idle_notes("a", 2)
    (message,) = conflicts(crew.team)
    assert (message.path, message.members) == (os.path.realpath(target), ["a", "b"])
    sender = [m.sender for m in crew.lead_messages() if isinstance(m.structured(), FileConflict)]
    assert sender == ["b"]

    status = crew.cli("status", "--json")
    rows: list[dict[str, Any]] = json.loads(status.stdout)
    assert {r["name"]: r["overlaps"] for r in rows} == {"a": [os.path.realpath(target)],
                                                         "b": [os.path.realpath(target)]}
    human = crew.cli("status").stdout.splitlines()
    assert human[-2:] == ["overlapping writes (same file, shared checkout):",
                          f"  ! {os.path.realpath(target)}: a, b"]
    assert paths.team_writes(crew.team.name).exists()



def test_an_approval_that_edits_the_path_out_of_scope_is_still_denied(crew: Crew) -> None:
    crew.spawn("w", permission_mode="default")
    crew.wait_state("w", "idle")
    crew.team.tasks.add("api", owner="w", files=["src/**"],
                        description="```write src/api.py\nmine\n```")
    (request,) = wait_until(lambda: pending_permissions(crew.team), 15,
                            message=f"a permission request (log: {crew.log('w')[-600:]})")
    assert request.request.input["file_path"] == "src/api.py"
    edited = json.dumps({"file_path": "docs/sneaky.md", "content": "elsewhere"})
    proc = crew.cli("permissions", "approve", request.request.request_id, "--input", edited)
    assert proc.returncode == 0, proc.stderr
    crew.wait_idle_notes("w", 1)
    assert not (crew.workdir / "docs" / "sneaky.md").exists()
    assert not (crew.workdir / "src" / "api.py").exists()
    assert "is outside the file scope of task(s) #1 owned by w (src/**)" in (
        crew.team.tasks.get("1").result or "")
