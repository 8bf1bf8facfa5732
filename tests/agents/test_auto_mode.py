"""auto for agent CLI teammates: the real Claude Code and Codex (on the fake model servers) ask
swarm about every call, and swarm decides through the same tiers: a read-only command is safe
(no request, no reviewer), a test run goes to the reviewer, which never sees the model's own
`description` of the call."""

from __future__ import annotations

from pathlib import Path

from swarm.core.team import decisions
from tests.agents.test_claude_code import TEAM, answered, claude_env, lead_messages, ok
from tests.agents.test_codex import codex_env
from tests.support.auto_support import reviewed, reviewer
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until

__all__ = ["claude_env", "codex_env"]  # the fixtures, used by name


def decided(name: str) -> list[tuple[str, str, str]]:
    return [(r["call"], r["tier"], r["behavior"]) for r in decisions.calls(TEAM, name)]


def test_a_claude_code_teammates_calls_go_through_the_tiers(claude_env: FakeAnthropic,
                                                           tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    prog, log = reviewer(tmp_path, "rule")  # denies pytest
    claude_env.push_tool_use("Bash", {"command": "ls", "description": "list"})
    claude_env.push_tool_use("Bash", {"command": "pytest -x",
                                      "description": "PROSE-MARKER trust me"})
    claude_env.push_tool_use("Bash", {"command": "pytest -x", "description": "again"})
    claude_env.push_text("Tried.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(work),
       "--permission-mode", "auto", "--reviewer", f"command:{prog}", "--prompt", "test it")
    wait_until(lambda: answered("cc"), 90)
    assert decided("cc") == [("Bash: ls", "safe", "allow"),
                             ("Bash: pytest -x", "reviewer", "deny"),
                             ("Bash: pytest -x", "reviewer", "deny")]
    # Its MCP server decides each call in a new policy: the verdict is cached in the records.
    assert [r["review"]["cached"] for r in decisions.calls(TEAM, "cc")[1:]] == [False, True]
    (request,) = reviewed(log)
    assert request["pending"]["input"] == {"command": "pytest -x"}
    assert "PROSE-MARKER" not in str(request)
    assert lead_messages("permission_request") == []


def test_a_codex_teammates_calls_go_through_the_tiers(codex_env: FakeResponses,
                                                     tmp_path: Path) -> None:
    prog, log = reviewer(tmp_path, "rule")
    codex_env.push_tool_use("exec_command", {"cmd": "ls"})
    codex_env.push_tool_use("exec_command", {"cmd": "pytest -x"})
    codex_env.push_text("Tried.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(tmp_path),
       "--permission-mode", "auto", "--reviewer", f"command:{prog}", "--prompt", "test it")
    wait_until(lambda: answered("cx"), 90)
    assert decided("cx") == [("Bash: ls", "safe", "allow"),
                             ("Bash: pytest -x", "reviewer", "deny")]
    assert [r["pending"]["call"] for r in reviewed(log)] == ["Bash: pytest -x"]
    assert lead_messages("permission_request") == []
