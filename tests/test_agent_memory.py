"""`memory: user|project|local` in an agent definition: its MEMORY.md is read into the prompt at
start, and the agent may write that one file with Write/Edit in acceptEdits without asking,
while any other `.swarm/` path still asks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from swarm.core.agents.definitions import parse_definition
from swarm.core.agents.memory import memory_file, memory_part
from swarm.core.shell import rules
from swarm.core.store import paths
from tests.agent_fixtures import Crew
from tests.fake_anthropic import FakeAnthropic
from tests.helpers import wait_until


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
    path = memory_file("project", "keeper", root)
    text = memory_part("project", "keeper", root)
    assert str(path) in text and "(empty)" in text  # no file yet: where to start one
    path.parent.mkdir(parents=True)
    path.write_text("".join(f"line {i}\n" for i in range(500)))
    text = memory_part("project", "keeper", root)
    assert "line 199" in text and "line 200\n" not in text and "[truncated" in text


def _check(path: Path, cwd: Path, own: tuple[Path, ...], mode: str = "acceptEdits"
           ) -> rules.Decision:
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


@pytest.mark.slow
def test_memory_is_read_into_the_prompt(crew: Crew, fake_api: FakeAnthropic) -> None:
    root = _repo(crew.workdir)
    path = memory_file("project", "keeper", root)
    path.parent.mkdir(parents=True)
    path.write_text("KEEPER-MEMORY-MARKER: the build needs make\n")
    _definition("project")
    crew.spawn("k1", prompt="go", model="sonnet", agent_type="keeper", cwd=str(root))
    crew.wait_idle_notes("k1", 1)
    texts = [str(b["system"][0]["text"]) for b in fake_api.messages_requests()]
    (system, *_) = [t for t in texts if "(agent id `k1@crew`)" in t]
    assert "KEEPER-MEMORY-MARKER: the build needs make" in system and str(path) in system
    assert system.index("You keep notes.") < system.index("KEEPER-MEMORY") < \
        system.index("# Your team")


@pytest.mark.slow
def test_a_write_to_its_memory_needs_no_asking_another_swarm_path_does(crew: Crew) -> None:
    root = _repo(crew.workdir)
    own = memory_file("local", "keeper", root)
    other = root / ".swarm" / "notes.md"
    script = crew.workdir / "script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_uses": [{"name": "Write", "input": {"file_path": str(own),
                                                   "content": "REMEMBERED\n"}}]},
        {"tool_uses": [{"name": "Write", "input": {"file_path": str(other),
                                                   "content": "x\n"}}]},
        {"text": "done"}]}))
    _definition("local")
    crew.spawn("k2", prompt="go", model=f"scripted:{script}", agent_type="keeper",
               cwd=str(root), permission_mode="acceptEdits")
    wait_until(lambda: own.is_file() and own.read_text() == "REMEMBERED\n", timeout=15,
               message=f"the memory write (log: {crew.log('k2')[-800:]})")

    def asked() -> bool:
        return any("permission_request" in m.text and str(other) in m.text
                   for m in crew.lead_messages())
    wait_until(asked, timeout=15, message="a permission request for .swarm/notes.md")
    assert not other.exists()
    assert not any("permission_request" in m.text and str(own) in m.text
                   for m in crew.lead_messages())
