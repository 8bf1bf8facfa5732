"""swarm's deny rules hold for every tool an agent CLI teammate has, reads included: with `Read(secret.txt)` and `Bash(cat:*)` denied, Claude Code's Read and `cat` and
Gemini CLI's read_file and `cat` never bring the file's content to the model, though those CLIs
read (and run what they deem read-only commands) without asking by themselves; nor does a read
through a link to it (a path the rule does not spell)."""

# ruff: noqa: F811 - the CLI fixtures are imported from their test modules and used by name
from __future__ import annotations

import json
from pathlib import Path

from tests.agents.test_claude_code import answered, claude_env, lead_messages, ok  # noqa: F401
from tests.agents.test_claude_code import prompts as claude_prompts
from tests.agents.test_gemini import MODEL, gemini_env  # noqa: F401 - the fixture
from tests.agents.test_gemini import prompts as gemini_prompts
from tests.agents.test_untrusted import checkout
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.helpers import wait_until

SECRET = "SECRET-CONTENT-4c1f9e"
DENY = ("--deny", "Read(secret.txt)", "--deny", "Bash(cat:*)")


def project(tmp_path: Path) -> Path:
    repo = checkout(tmp_path / "repo", {"secret.txt": f"{SECRET}\n", "notes.txt": "notes\n"})
    (repo / "link.txt").symlink_to("secret.txt")
    return repo


def test_claude_codes_reads_obey_swarms_deny_rules(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    repo = project(tmp_path)
    api = claude_env
    api.push_tool_use("Read", {"file_path": str(repo / "secret.txt")})
    api.push_tool_use("Bash", {"command": "cat secret.txt", "description": "show"})
    api.push_tool_use("Read", {"file_path": str(repo / "link.txt")})  # not named by the issue
    api.push_tool_use("Read", {"file_path": str(repo / "notes.txt")})  # allowed: a control
    api.push_text("Done.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(repo),
       *DENY, "--prompt", "read them")
    wait_until(lambda: answered("cc"), 90, message="the teammate ended its turn")
    sent = json.dumps(api.messages_requests())
    assert SECRET not in sent, "a denied read reached the model"
    assert "notes" in sent  # the read no rule denies went through
    assert lead_messages("permission_request") == []  # the rules decided: nobody was asked
    # Its reads are swarm's to decide (the allowed one was asked); the denied ones are refused
    # by Claude Code itself (swarm's deny rules are its own) or by swarm.
    assert ("Read", "allow") in [(p["tool"], p["decision"]) for p in claude_prompts("cc")]


def test_geminis_reads_obey_swarms_deny_rules(gemini_env: FakeGemini, tmp_path: Path) -> None:
    repo = project(tmp_path)
    api = gemini_env
    api.push_tool_use("read_file", {"file_path": str(repo / "secret.txt")})
    # Not named by the issue: a link to it, and `cat` (a command Gemini CLI deems safe runs
    # without asking anyone).
    api.push_tool_use("read_file", {"file_path": "link.txt"})
    api.push_tool_use("run_shell_command", {"command": "cat secret.txt", "description": "show"})
    api.push_tool_use("read_file", {"file_path": "notes.txt"})  # allowed: a control
    api.push_text("Done.")
    ok("spawn", "gm", "--agent", "gemini", "--model", MODEL, "--backend", "hidden", "--cwd",
       str(repo), *DENY, "--prompt", "read them")
    wait_until(lambda: answered("gm"), 90, message="the teammate ended its turn")
    sent = json.dumps(api.generate_requests())
    assert SECRET not in sent, "a denied read reached the model"
    assert "notes" in sent
    assert lead_messages("permission_request") == []
    decided = [(p["tool"], p["decision"]) for p in gemini_prompts("gm")]
    assert decided == [("Read", "deny"), ("Read", "deny"), ("Read", "allow")]
