"""An agent CLI teammate in an untrusted checkout: the real Claude Code, Codex
and Gemini CLI start with none of the checkout's own configuration for them (hooks, MCP
servers, settings, agents, skills), by each CLI's own switches; its instructions (CLAUDE.md,
GEMINI.md) are still text its model reads; the user's own configuration stays, untouched. Once
the user trusts the checkout, the CLI loads what `swarm trust` showed."""

# ruff: noqa: F811 - the CLI fixtures are imported from their test modules and used by name
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.agents.test_claude_code import answered, claude_env, ok  # noqa: F401 - the fixture
from tests.agents.test_codex import codex_env  # noqa: F401 - the fixture
from tests.agents.test_gemini import MODEL, gemini_env  # noqa: F401 - the fixture
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until


def checkout(path: Path, files: dict[str, str]) -> Path:
    """A git repository holding `files` (committed), as a clone would arrive."""
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git = ["git", "-C", str(path), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "clone"], check=True)
    return path


def hook(marker: Path) -> str:
    """A Claude Code settings file whose SessionStart hook leaves `marker`."""
    return json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"touch {marker}"}]}]}})


def spawn(name: str, agent: str, repo: Path, *extra: str) -> dict[str, object]:
    return json.loads(ok("spawn", name, "--agent", agent, "--backend", "hidden", "--cwd",
                         str(repo), "--prompt", "hello", "--json", *extra))


def test_an_untrusted_checkout_runs_nothing_when_claude_code_starts_in_it(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    ran = tmp_path / "HOOK_RAN"
    repo = checkout(tmp_path / "repo", {
        ".claude/settings.json": hook(ran),
        # Not named by the issue: the checkout's own agents and skills are offered to the model.
        ".claude/agents/helper.md": "---\nname: helper\ndescription: AGENT-FROM-THE-CHECKOUT\n"
                                    "---\nYou help.\n",
        ".claude/skills/tidy/SKILL.md": "---\nname: tidy\ndescription: SKILL-FROM-THE-CHECKOUT"
                                        "\n---\nTidy up.\n",
        "CLAUDE.md": "Notes of the checkout: CHECKOUT-INSTRUCTIONS\n"})
    claude_env.push_text("Hello.")
    spawned = spawn("cc", "claude-code", repo)
    assert any("project configuration ignored" in n for n in spawned["trust_notices"])  # type: ignore[attr-defined]
    wait_until(lambda: answered("cc"), 90, message="the teammate answered")
    sent = json.dumps(claude_env.messages_requests())
    assert not ran.exists(), "the checkout's SessionStart hook ran"
    assert "AGENT-FROM-THE-CHECKOUT" not in sent and "SKILL-FROM-THE-CHECKOUT" not in sent
    assert "CHECKOUT-INSTRUCTIONS" in sent  # instructions are text the model reads


def test_a_trusted_checkout_gives_claude_code_what_swarm_trust_showed(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    ran = tmp_path / "HOOK_RAN"
    repo = checkout(tmp_path / "repo", {".claude/settings.json": hook(ran)})
    shown = ok("trust", str(repo), "--yes")
    assert f"touch {ran}" in shown
    claude_env.push_text("Hello.")
    spawned = spawn("cc", "claude-code", repo)
    assert spawned["trust_notices"] == []
    wait_until(lambda: answered("cc"), 90, message="the teammate answered")
    assert ran.exists(), "the trusted hook ran"


def codex_server(marker: Path) -> str:
    """A checkout's Codex config whose MCP server (`sh`) leaves `marker` when started."""
    return (f'[mcp_servers.tools]\ncommand = "sh"\nargs = ["-c", "touch {marker}"]\n')


def test_an_untrusted_checkout_runs_nothing_when_codex_starts_in_it(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    ran = tmp_path / "SERVER_RAN"
    repo = checkout(tmp_path / "repo", {".codex/config.toml": codex_server(ran)})
    user_config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    before = user_config.read_text()
    codex_env.push_text("Hello.")
    spawned = spawn("cx", "codex", repo)
    assert any("project configuration ignored" in n for n in spawned["trust_notices"])  # type: ignore[attr-defined]
    wait_until(lambda: answered("cx"), 90, message="the teammate answered")
    assert not ran.exists(), "the checkout's MCP server was started"
    # Not named by the issue: Codex would record the checkout as trusted in the user's own
    # config (`[projects."<repo>"] trust_level = "trusted"`), for every later run of it.
    assert user_config.read_text() == before


def test_a_trusted_checkout_gives_codex_what_swarm_trust_showed(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    ran = tmp_path / "SERVER_RAN"
    repo = checkout(tmp_path / "repo", {".codex/config.toml": codex_server(ran)})
    user_config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    before = user_config.read_text()
    ok("trust", str(repo), "--yes")
    codex_env.push_text("Hello.")
    spawn("cx", "codex", repo)
    wait_until(lambda: answered("cx"), 90, message="the teammate answered")
    assert ran.exists(), "the trusted MCP server was started"
    assert user_config.read_text() == before


def test_an_untrusted_checkout_runs_nothing_when_gemini_starts_in_it(
        gemini_env: FakeGemini, tmp_path: Path) -> None:
    ran = tmp_path / "SERVER_RAN"
    repo = checkout(tmp_path / "repo", {
        ".gemini/settings.json": json.dumps({
            "mcpServers": {"tools": {"command": "sh", "args": ["-c", f"touch {ran}"]}},
            "model": {"name": "model-from-the-checkout"}}),
        # Not named by the issue: a skill of the checkout is offered to the model.
        ".gemini/skills/tidy/SKILL.md": "---\nname: tidy\ndescription: SKILL-FROM-THE-CHECKOUT"
                                        "\n---\nTidy up.\n",
        "GEMINI.md": "Notes of the checkout: CHECKOUT-INSTRUCTIONS\n"})
    gemini_env.push_text("Hello.")
    spawned = spawn("gm", "gemini", repo, "--model", MODEL)
    assert any("project configuration ignored" in n for n in spawned["trust_notices"])  # type: ignore[attr-defined]
    wait_until(lambda: answered("gm"), 90, message="the teammate answered")
    sent = json.dumps(gemini_env.generate_requests())
    assert not ran.exists(), "the checkout's MCP server was started"
    assert "model-from-the-checkout" not in json.dumps([r.path for r in gemini_env.requests])
    assert "SKILL-FROM-THE-CHECKOUT" not in sent
    assert "CHECKOUT-INSTRUCTIONS" in sent  # instructions are text the model reads
