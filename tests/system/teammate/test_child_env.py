"""What environment swarm's child processes get (docs/design/trust.md): hooks and
MCP servers a minimal one plus what their entry's `env` names; Bash tool commands the agent's
minus the model-provider credentials (and `SWARM_SECRET_VARS`). Real teammates, a real lead,
real hook and server processes that write out the environment they were given.

The tests of tests/unit/core/trust/test_child_env.py that start processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM
from tests.support.mcp_fixtures import write_server
from tests.unit.core.trust.test_child_env import extra_names, read_env, write_json


def test_a_teammates_hooks_and_servers_get_a_minimal_environment_plus_their_env(
        crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-key")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-secret")
    out = tmp_path / "env"
    out.mkdir()
    write_json(paths.user_settings(), {"hooks": {"PreToolUse": [
        {"command": f"env > {out}/hook-plain"},
        {"command": f"env > {out}/hook-named", "env": {
            "ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}", "GREETING": "hi ${SWARM_TEAM}"}}]}})
    server = write_server(tmp_path)

    def probe(name: str, **env: str) -> dict[str, Any]:
        return {"command": "sh", "args": ["-c", f"env > {out}/{name}; exec {sys.executable}"
                                                f" {server}"], "env": env}

    write_json(paths.user_mcp_config(), {"mcpServers": {
        "plain": probe("mcp-plain"), "named": probe("mcp-named", ANTHROPIC_API_KEY="${ANTHROPIC_API_KEY}")}})
    crew.spawn("bob", prompt=f"$ env > {out}/bash", mcp=("plain", "named"))
    crew.wait_idle_notes("bob", 1, timeout=60)
    agent_id = f"bob@{crew.team.name}"

    hook = read_env(out / "hook-plain")
    assert extra_names(hook) == set(), hook
    assert hook["SWARM_AGENT_ID"] == agent_id and hook["PWD"] == str(crew.workdir)
    named = read_env(out / "hook-named")
    assert extra_names(named) == {"ANTHROPIC_API_KEY", "GREETING"}
    assert (named["ANTHROPIC_API_KEY"], named["GREETING"]) == ("sk-secret-key", f"hi {crew.team.name}")

    server_env = read_env(out / "mcp-plain")
    assert extra_names(server_env) == set(), server_env
    assert server_env["SWARM_AGENT_ID"] == agent_id
    assert read_env(out / "mcp-named")["ANTHROPIC_API_KEY"] == "sk-secret-key"

    bash = read_env(out / "bash")
    assert "ANTHROPIC_API_KEY" not in bash and bash["SWARM_AGENT_ID"] == agent_id



@pytest.mark.usefixtures("lead_env")
def test_the_leads_hooks_get_a_minimal_environment_plus_their_env(tmp_path: Path) -> None:
    out = tmp_path / "env"
    out.mkdir()
    write_json(paths.user_settings(), {"hooks": {"PreToolUse": [
        {"command": f"env > {out}/plain"},
        {"command": f"env > {out}/named", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}]}})
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([{"tool_uses": [{"name": "TaskList", "input": {}}]},
                                  {"text": "Listed."}]))
    proc = subprocess.run(
        [SWARM, "lead", "--headless", "--model", f"scripted:{script}", "--backend", "hidden",
         "--team", "envlead", "go"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
        env={**os.environ, "GITHUB_TOKEN": "gh-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret"})
    assert proc.returncode == 0, proc.stderr
    plain = read_env(out / "plain")
    assert extra_names(plain) == set(), plain
    assert plain["SWARM_TEAM"] == "envlead" and plain["SWARM_AGENT_ID"] == "team-lead@envlead"
    named = read_env(out / "named")
    assert extra_names(named) == {"GITHUB_TOKEN"} and named["GITHUB_TOKEN"] == "gh-secret"
