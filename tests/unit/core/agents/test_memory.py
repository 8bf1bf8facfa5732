"""`memory: user|project|local` in an agent definition: its MEMORY.md is read into the prompt at
start, and the agent may write that one file with Write/Edit in acceptEdits without asking,
while any other `.swarm/` path still asks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.agents.definitions import get_definition, load_definitions, parse_definition
from swarm.core.agents.memory import memory_file, memory_part, memory_tools, own_memory
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import PermissionRequest, dump_structured
from swarm.core.shell import rules
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from swarm.ops.approvals import approve_permission
from tests.support.helpers import wait_until
from tests.support.subagent_host import FnModel, Host, ask, runner_with, text, tool


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))


def _repo(base: Path) -> Path:
    root = base / "repo"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _definition(scope: str) -> None:
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "keeper.md").write_text(
        f"---\nname: keeper\ndescription: remembers\nmemory: {scope}\n---\nYou keep notes.\n")


def test_the_scopes_name_their_files(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    sub = root / "sub"
    sub.mkdir()
    assert memory_file("user", "keeper", sub) == paths.home() / "agent-memory/keeper/MEMORY.md"
    assert memory_file("project", "keeper", sub) == root / ".swarm/agent-memory/keeper/MEMORY.md"
    assert memory_file("local", "keeper", sub) == \
        root / ".swarm/agent-memory-local/keeper/MEMORY.md"
    bad = parse_definition("---\nmemory: everywhere\n---\nb\n", "k.md", "user", "k")
    assert isinstance(bad, list) and bad[0].field == "memory"
    ok = parse_definition("---\nmemory: local\n---\nb\n", "k.md", "user", "k")
    assert not isinstance(ok, list) and ok.memory == "local" and not ok.warnings


def test_memory_is_capped_and_says_where_to_write(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    keeper = parse_definition("---\nmemory: project\n---\nb\n", "keeper.md", "user", "keeper")
    assert not isinstance(keeper, list)
    path = memory_file("project", "keeper", root)
    text = memory_part(keeper, root)
    assert str(path) in text and "(empty)" in text  # no file yet: where to start one
    path.parent.mkdir(parents=True)
    path.write_text("".join(f"line {i}\n" for i in range(500)))
    text = memory_part(keeper, root)
    assert "line 199" in text and "line 200\n" not in text and "[truncated" in text


def _check(path: Path, cwd: Path, own: tuple[Path, ...], mode: str = "acceptEdits"
           ) -> Decision:
    return rules.check("Write", {"file_path": str(path), "content": "x"}, mode=mode,
                       read_only=False, edits_files=True, cwd=cwd, allow=[], deny=[], own=own)


def test_only_the_own_memory_file_is_allowed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    own = memory_file("project", "keeper", root)
    own.parent.mkdir(parents=True)
    assert _check(own, root, (own,)).behavior == "allow"
    assert _check(own, root, ()).behavior == "ask"  # without the definition's memory
    assert _check(root / ".swarm/settings.json", root, (own,)).behavior == "ask"
    other = memory_file("project", "other", root)
    assert _check(other, root, (own,)).behavior == "ask"  # another agent type's memory
    assert _check(own, root, (own,), mode="default").behavior == "ask"
    user = memory_file("user", "keeper", root)  # outside the cwd, still its own
    assert _check(user, root, (user,)).behavior == "allow"
    # A MEMORY.md the checkout made a link to a hook is no longer "its own file".
    (root / ".git/hooks").mkdir(exist_ok=True)
    os.symlink(root / ".git/hooks/pre-commit", own)
    assert _check(own, root, (own,)).behavior == "ask"


# -- its tools and where the project scope lives (Claude Code's agent memory) ------------------
def test_project_memory_lives_beside_its_definition(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A `.claude/agents` definition's project (and local) memory is under `.claude/`, as
    Claude Code keeps it; swarm's own under `.swarm/`; the user scope under $SWARM_HOME."""
    monkeypatch.setenv("SWARM_TRUST_PROJECT", "1")
    root = _repo(tmp_path)
    for folder, name, scope in ((".claude", "keeper", "project"), (".swarm", "scribe", "project"),
                                (".claude", "local-keeper", "local")):
        agents = root / folder / "agents"
        agents.mkdir(parents=True, exist_ok=True)
        (agents / f"{name}.md").write_text(f"---\nname: {name}\nmemory: {scope}\n---\nb\n")
    found = load_definitions(root).definitions
    assert own_memory(found["keeper"], root) == root / ".claude/agent-memory/keeper/MEMORY.md"
    assert own_memory(found["scribe"], root) == root / ".swarm/agent-memory/scribe/MEMORY.md"
    assert own_memory(found["local-keeper"], root) == \
        root / ".claude/agent-memory-local/local-keeper/MEMORY.md"
    assert own_memory(get_definition("explore"), root) is None  # no memory: no file
    assert str(root / ".claude/agent-memory/keeper") in \
        memory_part(found["keeper"], root)  # where it is told to write


def test_write_and_edit_are_added_for_the_memory_file_only() -> None:
    def definition(text: str) -> AgentDefinition:
        parsed = parse_definition(text, "k.md", "user", "k")
        assert not isinstance(parsed, list)
        return parsed

    reader = definition("---\ntools: Read, Grep\nmemory: user\n---\nb\n")
    assert memory_tools(reader, ["Read", "Grep", "SendMessage"]) == ["Write", "Edit"]
    writer = definition("---\ntools: Read, Write\nmemory: user\n---\nb\n")
    assert memory_tools(writer, ["Read", "Write"]) == ["Edit"]  # its own Write stays whole
    denied = definition("---\ntools: Read\ndisallowedTools: Write\nmemory: user\n---\nb\n")
    assert memory_tools(denied, ["Read"]) == ["Edit"]  # an explicit denial wins
    assert memory_tools(definition("---\ntools: Read\n---\nb\n"), ["Read"]) == []


def test_a_typed_subagent_has_its_own_memory_not_its_parents(team: Team, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """A subagent of a type with memory is told of its MEMORY.md and writes it (Write added
    for it alone); the parent's own memory file is not its own."""
    root = _repo(tmp_path)
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "keeper.md").write_text("---\nname: keeper\ntools: Read, Grep\nmemory: user\n"
                                      "---\nYou keep notes.\n")
    own = memory_file("user", "keeper", root)
    parents = memory_file("user", "general-purpose", root)
    host = Host(team, root, mode="acceptEdits")
    host.policy.own_files = (parents,)
    model = FnModel(tool("Write", file_path=str(own), content="seen\n"),
                    tool("Write", file_path=str(parents), content="mine now\n"), text("done"))
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask("keeper", background=True))
    wait_until(runner.has_arrivals, 10)
    assert "# Your memory" in model.requests[0].system and str(own) in model.requests[0].system
    assert sorted(t["name"] for t in model.requests[0].tools) == ["Edit", "Grep", "Read", "Write"]
    assert own.read_text() == "seen\n" and not parents.exists()
    denied = model.requests[-1].messages[-1]["content"][0]
    assert denied["is_error"]
    assert denied["content"] == f"permission denied: Write is yours for your memory file ({own}) only"


def test_the_lead_may_approve_a_memory_write_in_default_mode(team: Team, tmp_path: Path) -> None:
    """In default mode its memory write asks; the approvals know the Write it was given for
    its file, and still refuse a tool it has not got."""
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "keeper.md").write_text("---\nname: keeper\ntools: Read, Grep\nmemory: user\n"
                                      "---\nYou keep notes.\n")
    team.add_member("keeper", agent_type="keeper", cwd=str(tmp_path))
    own = memory_file("user", "keeper", tmp_path)

    def ask(tool_name: str, args: dict[str, str]) -> str:
        request = PermissionRequest(agent_id=f"keeper@{team.name}", tool_name=tool_name,
                                    input=args)
        team.send(LEAD_NAME, dump_structured(request), sender="keeper")
        return request.request_id

    approve_permission(team, ask("Write", {"file_path": str(own), "content": "x"}))
    with pytest.raises(BadInputError, match="keeper has no tool 'Bash'"):
        approve_permission(team, ask("Bash", {"command": "ls"}))
