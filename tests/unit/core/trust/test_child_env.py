"""What environment swarm's child processes get (docs/design/trust.md): hooks and
MCP servers a minimal one plus what their entry's `env` names; Bash tool commands the agent's
minus the model-provider credentials (and `SWARM_SECRET_VARS`). Real teammates, a real lead,
real hook and server processes that write out the environment they were given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.runtime.extensions.user_hooks import parse_hooks
from swarm.runtime.tools.base import ToolContext
from swarm.runtime.tools.registry import all_tools
from tests.support.agent_fixtures import SWARM, Crew
from tests.support.mcp_fixtures import write_server

# What a hook or server may see besides LC_*: the minimal set, and what bash/sh add themselves.
MINIMAL = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "PWD",
           "SWARM_HOME", "SWARM_TEAM", "SWARM_AGENT_ID"}
SHELL_OWN = {"SHLVL", "_", "OLDPWD"}


def read_env(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isidentifier():
            out[key] = value
    return out


def extra_names(env: dict[str, str]) -> set[str]:
    return {k for k in env if k not in MINIMAL | SHELL_OWN and not k.startswith("LC_")}


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_bash_tool_loses_provider_credentials_and_swarm_secret_vars(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_AUTH_TOKEN": "tok",
                        "OPENAI_API_KEY": "sk-oai", "AWS_SECRET_ACCESS_KEY": "aws",
                        "AWS_SESSION_TOKEN": "sess", "MY_SECRET": "mine", "OTHER_SECRET": "o",
                        "ORDINARY_VAR": "plain",
                        "SWARM_SECRET_VARS": " MY_SECRET, OTHER_SECRET ,"}.items():
        monkeypatch.setenv(name, value)
    from swarm.core.team.team import Team

    team = Team.create("envs")
    ctx = ToolContext(team=team, name="team-lead", cwd=tmp_path, env={"SWARM_TEAM": "envs"})
    bash = all_tools()["Bash"]
    result = bash.run(bash.parse({"command": "env"}), ctx)
    seen = {line.partition("=")[0]: line.partition("=")[2] for line in result.content.splitlines()}
    for gone in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY",
                 "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "MY_SECRET", "OTHER_SECRET"):
        assert gone not in seen, gone
    assert seen["ORDINARY_VAR"] == "plain" and seen["SWARM_TEAM"] == "envs"


def test_a_bad_env_entry_in_a_hook_is_one_problem_naming_its_field() -> None:
    hooks, problems = parse_hooks({"hooks": {"PreToolUse": [
        {"command": "true", "env": {"A": 1}}, {"command": "ok", "env": {"B": "${B}"}}]}}, "s.json")
    assert [h.command for h in hooks] == ["ok"] and dict(hooks[0].env) == {"B": "${B}"}
    assert [p.field for p in problems] == ["hooks.PreToolUse[0].env.A"]


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


@pytest.mark.slow
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
