"""File scopes on tasks (enforced before Write/Edit in every mode) and overlapping writes (one
`file_conflict` to the lead per path): the decisions directly, the CLI and tools, and real
`swarm agent` shell teammates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import FileConflict
from swarm.core.records.state import AgentState
from swarm.core.store.liveness import process_start_time
from swarm.core.team.overlaps import overlapping, read_writes, record_write
from swarm.core.team.scopes import matches, scope_denial, unmatched
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from swarm.runtime.tools.base import ToolContext, run_tool
from swarm.runtime.tools.registry import all_tools


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


