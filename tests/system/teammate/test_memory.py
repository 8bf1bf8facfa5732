"""`memory: user|project|local` in an agent definition: its MEMORY.md is read into the prompt at
start, and the agent may write that one file with Write/Edit in acceptEdits without asking,
while any other `.swarm/` path still asks.

The tests of tests/unit/core/agents/test_memory.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json

from swarm.core.agents.memory import memory_file
from swarm.core.store import paths
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until
from tests.unit.core.agents.test_memory import (
    _definition,
    _repo,
    credentials,  # noqa: F401 - the fixtures
)


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



def test_a_read_only_definition_records_its_memory(crew: Crew, fake_api: FakeAnthropic) -> None:
    """`memory: project` and `tools: Read, Grep`: the model is given Write and Edit, which
    write its MEMORY.md without asking (acceptEdits) and nothing else, nor are they its to
    lend a subagent."""
    root = _repo(crew.workdir)
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "keeper.md").write_text("---\nname: keeper\ntools: Read, Grep, Agent\n"
                                      "memory: project\n---\nYou keep notes.\n")
    helper = fake_api.route(lambda body: "# You are a subagent" in body["system"][0]["text"])
    helper.push_text("looked")
    own = root / ".swarm/agent-memory/keeper/MEMORY.md"
    other = root / "notes.md"
    fake_api.push_tool_use("Write", {"file_path": str(own), "content": "the build needs make\n"})
    fake_api.push_tool_use("Edit", {"file_path": str(own), "old_string": "make",
                                    "new_string": "make -j4"})
    fake_api.push_tool_use("Write", {"file_path": str(other), "content": "x\n"})
    fake_api.push_tool_use("Agent", {"description": "look", "prompt": "Look.",
                                     "subagent_type": "general-purpose"})
    fake_api.push_text("noted")
    crew.spawn("k1", prompt="go", model="sonnet", agent_type="keeper", cwd=str(root),
               permission_mode="acceptEdits")
    crew.wait_idle_notes("k1", 1)
    subagent = [b for b in fake_api.messages_requests() if "# You are a subagent" in
                b["system"][0]["text"]]
    assert [t["name"] for t in subagent[0]["tools"]] == ["Read", "Grep", "SendMessage"]  # no Write
    bodies = [b for b in fake_api.messages_requests() if b not in subagent]
    assert [t["name"] for t in bodies[0]["tools"]][:4] == ["Read", "Write", "Edit", "Grep"]
    assert "Write and Edit are yours for this file only" in bodies[0]["system"][0]["text"]
    assert own.read_text() == "the build needs make -j4\n"
    results = [b for body in bodies[1:] for b in body["messages"][-1]["content"]
               if b.get("type") == "tool_result"]
    assert [bool(r.get("is_error")) for r in results] == [False, False, True, False]
    assert results[2]["content"] == (f"permission denied: Write is yours for your memory file"
                                     f" ({own}) only")
    assert not other.exists()
    assert not any("permission_request" in m.text for m in crew.lead_messages())
