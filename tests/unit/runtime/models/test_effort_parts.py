"""Effort and thinking in the parts around the model: the agent CLIs' options (core.kinds),
compaction, the transcript (resume and its folded view), the token caps, a definition's field."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from swarm.core import kinds
from swarm.core.agents.definitions import parse_definition
from swarm.core.records.state import Usage
from swarm.core.team.transcript import Transcript
from swarm.core.text.view import View
from swarm.runtime.models.base import ModelReply, ModelRequest
from swarm.runtime.tools.base import Tool
from swarm.runtime.turn.budget import Budget
from swarm.runtime.turn.compaction import Compactor

THINKING = {"type": "thinking", "thinking": "Plan: read, then edit.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xl"}


def test_agent_clis_take_the_effort_as_their_registry_entry_says() -> None:
    claude, codex, gemini = (kinds.agent_cli(n) for n in ("claude-code", "codex", "gemini"))
    assert claude.effort_argv("max") == ["--effort", "max"]
    assert claude.effort_argv("low") == ["--effort", "low"]
    assert codex.effort_argv("max") == ["-c", "model_reasoning_effort=xhigh"]
    assert codex.effort_argv("medium") == ["-c", "model_reasoning_effort=medium"]
    assert gemini.effort is None and gemini.effort_argv("high") == []
    assert claude.effort_argv(None) == []


def test_the_spawner_warns_for_a_cli_without_an_effort_option() -> None:
    from swarm.ops.member.spawner import _effort_warning

    line = _effort_warning(kinds.agent_cli("gemini"), None, "high")
    assert line is not None and line.startswith("effort high: Gemini CLI takes no effort")
    assert _effort_warning(kinds.agent_cli("codex"), None, "high") is None
    assert _effort_warning(kinds.of_member(None), "sonnet", "high") is None
    offline = _effort_warning(kinds.of_member(None), "shell", "low")
    assert offline is not None and "shell" in offline


@dataclass
class Conversation:
    messages: list[dict[str, Any]]
    system: str = "sys"
    tools: dict[str, Tool] = field(default_factory=dict)
    cache_marks: tuple[int, ...] = ()
    asked: list[ModelRequest] = field(default_factory=list)

    def complete(self, request: ModelRequest) -> ModelReply:
        self.asked.append(request)
        return ModelReply([{"type": "text", "text": "the summary"}])


def test_compaction_keeps_the_current_turns_thinking_and_folds_the_rest_as_text() -> None:
    older = [{"role": "user", "content": [{"type": "text", "text": "x" * 400}]},
             {"role": "assistant", "content": [THINKING, REDACTED, {"type": "text", "text": "ok"}]}]
    current = [{"role": "user", "content": [{"type": "text", "text": "now this"}]},
               {"role": "assistant", "content": [
                   THINKING, {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                             "content": "done"}]}]
    loop = Conversation([*older, *current])
    Compactor(lambda summary, kept: None, lambda usage: None, limit=10)(loop)
    assert loop.messages[-3:] == current  # the cycle under way: its thinking whole
    (request,) = loop.asked
    folded = json.dumps(request.messages)
    assert "Plan: read, then edit." in folded
    assert THINKING["signature"] not in folded and REDACTED["data"] not in folded


def test_a_resumed_conversation_has_its_thinking_blocks(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "transcript.jsonl")
    transcript.message({"role": "user", "content": [{"type": "text", "text": "go"}]})
    transcript.message({"role": "assistant", "content": [THINKING, REDACTED,
                                                         {"type": "text", "text": "Done."}]})
    again = Transcript(tmp_path / "transcript.jsonl").conversation()
    assert again[1]["content"][:2] == [THINKING, REDACTED]
    lines = View(color=False).transcript(transcript.entries())
    shown = "\n".join(lines)
    assert "[thinking, 22 chars] Plan: read, then edit." in shown
    assert "[thinking, redacted]" in shown and THINKING["signature"] not in shown


def test_token_caps_count_thinking_tokens() -> None:
    spent = Usage(input_tokens=10, output_tokens=20, thinking_tokens=80)
    assert spent.total_tokens == 110
    line = Budget(lambda: spent, threading.Lock(), None, 100).check()
    assert line is not None and "used 110 tokens" in line
    assert Budget(lambda: Usage(input_tokens=10, output_tokens=20), threading.Lock(), None,
                  100).check() is None


@pytest.mark.parametrize(("value", "problem"), [("high", None), ("MAX", None),
                                                ("huge", "unknown effort 'huge'")])
def test_a_definitions_effort_is_checked(value: str, problem: str | None) -> None:
    found = parse_definition(f"---\nname: p\ndescription: d\neffort: {value}\n---\nbody\n",
                             "p.md", "user", "p")
    if problem is None:
        assert not isinstance(found, list) and found.effort == value.lower()
        assert not found.warnings
    else:
        assert isinstance(found, list) and problem in found[0].message


def test_spawn_teammate_takes_an_effort() -> None:
    from swarm.lead.lead_tools import SpawnTeammate, SpawnTeammateInput

    assert SpawnTeammateInput.model_validate(
        {"name": "p", "prompt": "plan", "effort": "HIGH"}).effort == "high"
    assert SpawnTeammateInput.model_validate({"name": "p", "prompt": "x", "effort": ""}).effort \
        is None
    with pytest.raises(ValueError, match="low, medium, high, max"):
        SpawnTeammateInput.model_validate({"name": "p", "prompt": "x", "effort": "huge"})
    schema = SpawnTeammate().spec()["input_schema"]
    assert schema["properties"]["effort"]["enum"] == ["low", "medium", "high", "max"]


@pytest.mark.parametrize(("name", "expected"), [
    ("claude-code", ["--effort", "max"]), ("codex", ["-c", "model_reasoning_effort=xhigh"]),
    ("gemini", [])])
def test_each_drivers_command_line_carries_the_effort(
        tmp_path: Path, name: str, expected: list[str]) -> None:
    from swarm.runtime.clis.base import DriverSetup
    from swarm.runtime.clis.claude_code import ClaudeCode
    from swarm.runtime.clis.codex import Codex
    from swarm.runtime.clis.gemini import Gemini

    kind = kinds.agent_cli(name)
    drivers: dict[str, Any] = {"claude-code": ClaudeCode, "codex": Codex, "gemini": Gemini}

    def argv(effort: str | None) -> list[str]:
        setup = DriverSetup(kind=kind, executable=tmp_path / name, cwd=tmp_path, mode="default",
                            model=None, effort=effort, system_append="", mcp_server=["swarm"],
                            mcp_env={}, session=None, env={}, log=lambda line: None)
        return list(drivers[name](setup).argv())

    with_effort, without = argv("max"), argv(None)
    assert [w for w in with_effort if w not in without] == [w for w in expected
                                                            if w not in without]
    assert len(with_effort) - len(without) == len(expected)
