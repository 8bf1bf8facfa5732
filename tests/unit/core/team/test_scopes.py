"""File scopes on tasks (enforced before Write/Edit in every mode) and overlapping writes (one
`file_conflict` to the lead per path): the decisions directly, the CLI and tools, and real
`swarm agent` shell teammates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import FileConflict
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.store.liveness import process_start_time
from swarm.core.team.overlaps import overlapping, read_writes, record_write
from swarm.core.team.scopes import matches, scope_denial, unmatched
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from swarm.ops.approvals import pending_permissions
from swarm.runtime.tools.base import ToolContext, run_tool
from swarm.runtime.tools.registry import all_tools
from tests.support.agent_fixtures import Crew, run_swarm
from tests.support.helpers import wait_until


def conflicts(team: Team) -> list[FileConflict]:
    return [s for m in team.inbox(LEAD_NAME, checked=False).messages(include_archive=True)
            if isinstance(s := m.structured(), FileConflict)]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "src" / "api").mkdir(parents=True)
    (root / "docs").mkdir()
    return root


@pytest.fixture
def scoped(team: Team, work: Path) -> Team:
    """alice owns in-progress task #1 scoped to src/**; bob has nothing; both work in `work`."""
    for name in ("alice", "bob"):
        team.update_member(name, cwd=str(work))
    team.tasks.add("api", owner="alice", files=["src/**"])
    team.tasks.claim("1", "alice")
    return team


def make_live(team: Team, name: str) -> None:
    """Record `name` as running: its state names a live process (this test's)."""
    pid = os.getpid()
    write_state(team.name, name, AgentState(state="working", pid=pid,
                                            started_at=process_start_time(pid)))


def test_glob_semantics(work: Path) -> None:
    assert matches("src/**", work / "src" / "api" / "x.py", work)
    assert matches("src", work / "src" / "api" / "x.py", work)  # a directory covers its tree
    assert matches("src/", work / "src" / "x.py", work)
    assert matches("*.md", work / "docs" / "a.md", work)  # `*` crosses `/`, as in rules
    assert matches(str(work / "docs") + "/*", work / "docs" / "a.md", work)  # absolute
    assert not matches("src/**", work / "docs" / "a.md", work)
    assert not matches("src/**", work / "srcs" / "a.py", work)
    assert unmatched(["src", "docs/*.md", "nope/**", "src/api/**"], work) == ["docs/*.md",
                                                                             "nope/**"]


def test_the_owner_writes_only_inside_its_scope(scoped: Team, work: Path) -> None:
    assert scope_denial(scoped, "alice", work / "src" / "api" / "x.py") is None
    denial = scope_denial(scoped, "alice", work / "docs" / "notes.md")
    assert denial == (f"{work / 'docs' / 'notes.md'} is outside the file scope of task(s) #1 "
                      "owned by alice (src/**): write inside it, or finish the task first")
    # A second in-progress task widens the union.
    scoped.tasks.add("docs", owner="alice", files=["docs/*.md"])
    scoped.tasks.claim("2", "alice")
    assert scope_denial(scoped, "alice", work / "docs" / "notes.md") is None
    assert "#1, #2" in (scope_denial(scoped, "alice", work / "README") or "")


def test_others_may_not_write_into_a_live_members_scope(scoped: Team, work: Path) -> None:
    target = work / "src" / "api" / "x.py"
    assert scope_denial(scoped, "bob", target) is None  # alice is not running: no claim on it
    make_live(scoped, "alice")
    assert scope_denial(scoped, "bob", target) == (
        f"{target} is inside the file scope 'src/**' of task #1, owned by alice (in progress): "
        "ask alice or the lead to change it")
    assert scope_denial(scoped, "bob", work / "docs" / "ok.md") is None  # outside: free
    assert scope_denial(scoped, LEAD_NAME, target) is not None  # the lead too
    scoped.tasks.update("1", status="completed")
    assert scope_denial(scoped, "bob", target) is None  # a finished task binds nobody
    assert scope_denial(scoped, "alice", work / "docs" / "x.md") is None


def test_pending_or_unscoped_tasks_bind_nobody(team: Team, work: Path) -> None:
    team.tasks.add("later", owner="alice", files=["src/**"])  # pending
    team.tasks.add("free", owner="bob")
    team.tasks.claim("2", "bob")
    assert scope_denial(team, "alice", work / "docs" / "x") is None
    assert scope_denial(team, "bob", work / "docs" / "x") is None


def test_empty_globs_are_bad_input(team: Team) -> None:
    with pytest.raises(BadInputError, match="must not be empty"):
        team.tasks.add("x", files=["  "])
    assert team.tasks.list() == []


@pytest.mark.slow
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


def test_task_tools_carry_files(team: Team, work: Path) -> None:
    ctx = ToolContext(team=team, name="alice", cwd=work)
    tools = all_tools()
    created = run_tool(tools["TaskCreate"], {"subject": "api", "files": ["src/api/**"]}, ctx)
    assert created.content == "created task #1: api"
    listed = run_tool(tools["TaskList"], {}, ctx).content
    assert listed == "#1 [pending] owner=- files=src/api/** api"
    assert json.loads(run_tool(tools["TaskGet"], {"task_id": "1"}, ctx).content)["files"] == [
        "src/api/**"]
    assert "files" in tools["TaskCreate"].input_schema["properties"]


def test_overlapping_writes_tell_the_lead_once_per_path(team: Team, work: Path) -> None:
    shared, own = work / "shared.txt", work / "own.txt"
    assert record_write(team, "alice", shared) is None
    assert record_write(team, "alice", own) is None
    assert record_write(team, "alice", shared) is None  # the same writer again: no overlap
    assert record_write(team, "bob", shared) == ["alice", "bob"]
    team.add_member("carol")
    assert record_write(team, "carol", shared) is None  # already reported
    (message,) = conflicts(team)
    assert (message.path, message.members) == (os.path.realpath(shared), ["alice", "bob"])
    assert overlapping(team.name) == {os.path.realpath(shared): ["alice", "bob", "carol"]}
    assert read_writes(team.name).reported == [os.path.realpath(shared)]
    # The same relative path in two worktrees is two files: no overlap.
    assert record_write(team, "alice", work / "wt-a" / "x.py") is None
    assert record_write(team, "bob", work / "wt-b" / "x.py") is None
    assert len(conflicts(team)) == 1


@pytest.mark.slow
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
