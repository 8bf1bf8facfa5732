"""Helpers of the ACP teammate tests (tests/system/teammate/test_acp_driver.py, tests/agents/test_acp_*.py): the fake ACP agent registered as a
kind in every `swarm` process a test starts (a `sitecustomize` module on PYTHONPATH, as a plugin
would), its log, and what the lead was sent."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.store import paths
from swarm.core.team.transcript import Transcript
from tests.support.cli_runner import run_swarm
from tests.support.cli_teammate_steps import notes
from tests.support.fake_anthropic import Script
from tests.support.helpers import children_with

REPO = Path(__file__).resolve().parents[2]
FAKE_KIND = "acp:fake-acp"

FAKE_EXE = """\
#!{python}
import sys
sys.path.insert(0, {repo!r})
from tests.support.fake_acp_agent import main
main()
"""

FAKE_PLUGIN = """\
from types import MappingProxyType
from swarm.core import kinds

kinds.register(kinds.TeammateKind(
    name="acp:fake-acp", title="Fake ACP agent", executable="fake-acp",
    driver="swarm.runtime.clis.acp_driver:AcpDriver", env_prefixes=("FAKE_ACP_",),
    project_config=(kinds.ConfigPath("fake_settings", ".fake-acp/settings.json"),),
    protected=(".fake-acp/",), sign_in_hint="run `fake-acp login`",
    modes=MappingProxyType({"default": "default", "acceptEdits": "default",
                            "bypassPermissions": "default"}),
    acp=kinds.AcpAgent(id="fake-acp")))
"""


def install_fake(root: Path) -> dict[str, str]:
    """The fake agent's executable and its kind's plugin under `root`; the variables a test
    sets (PATH, PYTHONPATH, FAKE_ACP_STATE, FAKE_ACP_SCRIPT)."""
    plugin, bin_dir, state = root / "acp-plugin", root / "acp-bin", root / "acp-state"
    for directory in (plugin, bin_dir, state):
        directory.mkdir(parents=True, exist_ok=True)
    (plugin / "sitecustomize.py").write_text(FAKE_PLUGIN)
    exe = bin_dir / "fake-acp"
    exe.write_text(FAKE_EXE.format(python=sys.executable, repo=str(REPO)))
    exe.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": os.pathsep.join([str(plugin), str(REPO),
                                           *filter(None, [os.environ.get("PYTHONPATH")])]),
            "FAKE_ACP_STATE": str(state), "FAKE_ACP_SCRIPT": str(root / "acp-script.json")}


def fake_team(root: Path, monkeypatch: pytest.MonkeyPatch, team: str) -> dict[str, str]:
    """The fake agent installed under `root` and its variables set, a checkout `root/project`
    as the working directory, and `team` created (SWARM_TEAM); returns the variables."""
    env = install_fake(root)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("SWARM_TEAM", team)
    ok("team", "create", team)
    return env


def script(env: dict[str, str], turns: list[list[dict[str, Any]]]) -> None:
    """The fake agent's turns from now on (counted from its first prompt)."""
    Path(env["FAKE_ACP_SCRIPT"]).write_text(json.dumps(turns))


def fake_log(env: dict[str, str], method: str | None = None) -> list[dict[str, Any]]:
    path = Path(env["FAKE_ACP_STATE"]) / "log.jsonl"
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in entries if method is None or e.get("method") == method]


def fake_processes(pid: int) -> list[psutil.Process]:
    return children_with(pid, lambda argv: any("fake-acp" in a for a in argv[:2]))


def lead_notes(team: str, kind: str) -> list[dict[str, Any]]:
    return notes(team, kind)


def answered(team: str, name: str, count: int = 1) -> bool:
    return len([m for m in notes(team, "idle_notification") if m["sender"] == name]) >= count


def prompts(team: str, name: str) -> list[dict[str, Any]]:
    """What the agent asked and swarm answered, from the member's transcript."""
    return [e for e in Transcript(paths.agent_transcript(team, name)).entries()
            if e.get("event") == "permission_prompt"]


# -- the real agents (tests/agents/test_acp_agents.py, tests/agents/test_acp_team.py) --------------------------
@dataclass(frozen=True)
class Agent:
    kind: str  # --agent
    cache: str  # tests/support/agent_clis.py name
    marker: str  # in its process's command line
    shell: str  # its shell tool and the input it takes
    shell_args: Callable[[str], dict[str, Any]]
    swarm_tool: Callable[[str], list[tuple[str, dict[str, Any]]]]  # how it calls swarm's tool


def _qwen_tool(tool: str) -> list[tuple[str, dict[str, Any]]]:
    # Session MCP tools are deferred: found with tool_search, then called with tool_call.
    return [("tool_search", {"query": f"select:mcp__swarm__{tool}"}),
            ("tool_call", {"name": f"mcp__swarm__{tool}", "arguments": "ARGS"})]


QWEN = Agent("acp:qwen-code", "qwen-code", "qwen-code", "run_shell_command",
             lambda c: {"command": c, "description": "run it"}, _qwen_tool)
OPENCODE = Agent("acp:opencode", "opencode", "opencode", "bash",
                 lambda c: {"command": c, "description": "run it"},
                 lambda tool: [(f"swarm_{tool}", {})])


def push_swarm_call(api: Script, agent: Agent, tool: str, args: dict[str, Any]) -> None:
    for name, first in agent.swarm_tool(tool):
        if first.get("arguments") == "ARGS":
            first = {**first, "arguments": args}
        api.push_tool_use(name, first or args)


def ok(*args: str, timeout: float = 90.0) -> str:
    proc = run_swarm(*args, timeout=timeout)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"
    return proc.stdout


