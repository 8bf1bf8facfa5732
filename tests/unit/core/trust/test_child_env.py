"""What environment swarm's child processes get (docs/design/trust.md): hooks and
MCP servers a minimal one plus what their entry's `env` names; Bash tool commands the agent's
minus the model-provider credentials (and `SWARM_SECRET_VARS`). Real teammates, a real lead,
real hook and server processes that write out the environment they were given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.runtime.extensions.user_hooks import parse_hooks
from swarm.runtime.tools.base import ToolContext
from swarm.runtime.tools.registry import all_tools

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


