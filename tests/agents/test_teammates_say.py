"""Agent CLI teammates say when they wait and what went wrong, with the real
Claude Code, Codex and Gemini CLI on the fake model servers: a teammate whose question waits for
the lead shows `waiting_permission` with the question in `swarm status`, as swarm's own do; its
`model` is the model its CLI reports; the lead's denial reason reaches Gemini's model too; a
Claude Code teammate with no credential says the CLI's error. Its environment carries the
variables its CLI's own config names (a Codex provider's `env_key`), and `swarm doctor` reads the
same config; every `swarm mcp snippet` names the variables it relies on."""

# ruff: noqa: F811 - the CLI fixtures are imported from their test modules and used by name
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.state import read_state
from tests.agents.test_claude_code import answered, claude_env, lead_messages, ok  # noqa: F401
from tests.agents.test_codex import codex_env  # noqa: F401 - the fixture
from tests.agents.test_gemini import MODEL, gemini_env  # noqa: F401 - the fixture
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until


def row(name: str) -> dict[str, Any]:
    return {r["name"]: r for r in json.loads(ok("status", "--json"))}[name]


def waits_for_the_lead(name: str, command: str) -> dict[str, Any]:
    """Its question reaches the lead, and its status row says it waits and for what."""
    asks = wait_until(lambda: lead_messages("permission_request"), 90,
                      message="the question reached the lead")
    assert asks[0]["input"]["command"] == command
    shown = wait_until(lambda: (r := row(name))["state"] == "waiting_permission" and r, 30,
                       message=f"{name} shows waiting_permission")
    assert command in (shown["detail"] or "")
    return dict(asks[0])


def test_a_waiting_claude_code_teammate_says_so_and_shows_its_model(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    out = tmp_path / "never.txt"
    claude_env.push_tool_use("Bash", {"command": f"echo x > {out}", "description": "write"})
    claude_env.push_text("Denied.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(tmp_path),
       "--prompt", "write it")
    ask = waits_for_the_lead("cc", f"echo x > {out}")
    ok("permissions", "deny", ask["request_id"][:8], "--reason", "not now")
    wait_until(lambda: answered("cc"), 60, message="the teammate ended its turn")
    assert row("cc")["state"] == "idle" and not out.exists()
    sent = claude_env.messages_requests()[-1]["model"]  # the model the CLI runs
    assert row("cc")["model"] == sent


def test_a_waiting_codex_teammate_says_so_and_shows_its_model(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    out = tmp_path / "never.txt"
    codex_env.push_tool_use("exec_command", {"cmd": f"echo x > {out}"})
    codex_env.push_text("Denied.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(tmp_path),
       "--prompt", "write it")
    ask = waits_for_the_lead("cx", f"echo x > {out}")
    ok("permissions", "deny", ask["request_id"][:8], "--reason", "not now")
    wait_until(lambda: answered("cx"), 60, message="the teammate ended its turn")
    assert row("cx")["state"] == "idle" and not out.exists()
    assert row("cx")["model"] == "gpt-fake"  # the user's config's model, as Codex reports it


def test_the_leads_reason_reaches_geminis_model(gemini_env: FakeGemini, tmp_path: Path) -> None:
    out = tmp_path / "never.txt"
    gemini_env.push_tool_use("run_shell_command", {"command": f"echo x > {out}",
                                                   "description": "write"})
    gemini_env.push_text("Denied.")
    ok("spawn", "gm", "--agent", "gemini", "--model", MODEL, "--backend", "hidden", "--cwd",
       str(tmp_path), "--prompt", "write it")
    ask = waits_for_the_lead("gm", f"echo x > {out}")
    assert row("gm")["model"] == MODEL
    ok("permissions", "deny", ask["request_id"][:8], "--reason", "use the scratch folder")
    wait_until(lambda: answered("gm"), 60, message="the teammate ended its turn")
    gemini_env.push_text("Understood.")
    ok("send", "gm", "go on")
    told = wait_until(lambda: [b for b in gemini_env.generate_requests()
                               if "go on" in json.dumps(b)], 60)
    assert "use the scratch folder" in json.dumps(told[0]), "the model read the lead's reason"


def test_a_claude_code_teammate_with_no_credential_says_the_clis_error(
        claude_env: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(tmp_path),
       "--prompt", "hello")
    wait_until(lambda: answered("cc"), 90, message="the teammate ended its turn")
    failure = lead_messages("idle_notification")[-1].get("failure_reason") or ""
    state = read_state("alpha", "cc")
    assert state is not None
    for said in (failure, state.detail or ""):
        assert "Not logged in" in said and "success" not in said, said


def azure_codex(home: Path, api: FakeResponses) -> None:
    """The user's Codex config: a custom provider whose key is in AZURE_OPENAI_API_KEY."""
    (home / ".codex" / "config.toml").write_text(
        'model = "gpt-fake"\nmodel_provider = "azure"\n\n[model_providers.azure]\n'
        f'name = "azure"\nbase_url = "{api.api_url}"\nwire_api = "responses"\n'
        'env_key = "AZURE_OPENAI_API_KEY"\n')


def test_a_codex_teammate_gets_the_key_its_providers_config_names(
        codex_env: FakeResponses, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    azure_codex(Path(os.environ["HOME"]), codex_env)
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-9f1e77")
    codex_env.push_text("Signed in.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(tmp_path),
       "--prompt", "hello")
    wait_until(lambda: answered("cx"), 90, message="the teammate ended its turn")
    assert lead_messages("idle_notification")[-1]["summary"] == "Signed in."
    sent = {r.headers.get("authorization") for r in codex_env.requests
            if r.path.endswith("/responses")}
    assert sent == {"Bearer azure-key-9f1e77"}
    doctor = json.loads(run_swarm("doctor", "--json").stdout)
    codex = next(r for r in doctor["agent_clis"] if r["executable"] == "codex")
    assert codex["signed_in"] == "key: AZURE_OPENAI_API_KEY"


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_every_snippet_names_the_variables_it_relies_on(client: str) -> None:
    text = ok("mcp", "snippet", client, "--team", "alpha")
    for variable in ("SWARM_HOME", "SWARM_STORE"):
        assert variable in text, f"the {client} snippet relies on {variable} unnamed"
    if client == "gemini":
        env = json.loads(text)["mcpServers"]["swarm"]["env"]
        assert env == {"SWARM_HOME": "${SWARM_HOME:-}", "SWARM_STORE": "${SWARM_STORE:-}"}
