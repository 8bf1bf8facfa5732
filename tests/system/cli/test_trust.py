"""Workspace trust (docs/design/trust.md) through the `swarm` executable: `swarm trust` refuses
bad input and shows control characters escaped, `swarm doctor` shows the trust state, and the
loaders use a project's files only once it is trusted (in-process:
tests/unit/core/trust/test_workspace.py)."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from swarm.core.agents.definitions import load_definitions
from swarm.core.store import paths
from swarm.core.trust.mcp_config import load_mcp_config
from swarm.core.trust.workspace import find_project_config, record
from swarm.runtime.extensions.user_hooks import load_hooks
from tests.support.agent_fixtures import error_lines
from tests.support.cli_runner import SWARM, run_swarm
from tests.unit.core.trust.test_workspace import (
    repo,  # noqa: F401 - the fixtures
    write,
)


def test_the_loaders_use_a_projects_files_only_when_it_is_trusted(repo: Path) -> None:
    write(repo / ".swarm/settings.json", '{"hooks": {"SessionEnd": [{"command": "x"}]}}')
    write(repo / ".mcp.json", '{"mcpServers": {"p": {"command": "x"}}}')
    write(repo / ".swarm/agents/tester.md", "Test.\n")
    assert load_hooks(repo / "src") == ([], [])
    assert load_mcp_config(repo).servers == {}
    assert "tester" not in load_definitions(repo).definitions
    listed = run_swarm("agents", "list", cwd=repo)
    assert listed.returncode == 0 and "tester" not in listed.stdout
    assert [line for line in error_lines(listed) if "swarm trust" in line]
    record(find_project_config(repo))
    assert [h.command for h in load_hooks(repo / "src")[0]] == ["x"]
    assert list(load_mcp_config(repo).servers) == ["p"]
    assert load_definitions(repo).definitions["tester"].source == "project"
    listed = run_swarm("agents", "list", cwd=repo)
    assert "tester" in listed.stdout and error_lines(listed) == []


def test_swarm_trust_shows_control_characters_escaped(repo: Path) -> None:
    write(repo / ".swarm/settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"command": "echo \x1b]52;c;ZXZpbA==\x07 \x1b[2J"}]}}))
    write(repo / ".swarm/agents/evil\x1b[31m.md", "---\ntools: Bash\n---\nx\n")
    proc = run_swarm("trust", "--yes", str(repo))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b]52;c;ZXZpbA==\\x07" in proc.stdout and "evil\\x1b[31m.md" in proc.stdout


def test_swarm_trust_refuses_bad_input_and_says_when_there_is_nothing_to_trust(
        repo: Path, tmp_path: Path) -> None:
    proc = run_swarm("trust", str(tmp_path / "missing"), "--yes")
    assert proc.returncode == 2 and len(error_lines(proc)) == 1
    nothing = run_swarm("trust", "--yes", str(repo))
    assert nothing.returncode == 0 and "no project configuration" in nothing.stdout
    assert not paths.trust_file().exists()
    write(repo / ".mcp.json", "{}")
    no_terminal = subprocess.run([SWARM, "trust", str(repo)], capture_output=True, text=True,
                                 stdin=subprocess.DEVNULL, timeout=30)
    assert no_terminal.returncode == 2 and "--yes" in no_terminal.stderr
    assert not paths.trust_file().exists()
    record(find_project_config(repo))
    again = subprocess.run([SWARM, "trust", str(repo)], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=30)
    assert again.returncode == 0 and "already trusted" in again.stdout


def test_doctor_shows_the_trust_state(repo: Path) -> None:
    def state() -> dict[str, Any]:
        proc = run_swarm("doctor", "--json", cwd=repo)
        return json.loads(proc.stdout)["project_trust"]  # type: ignore[no-any-return]

    assert state()["state"] == "none"
    write(repo / ".mcp.json", "{}")
    untrusted = state()
    assert (untrusted["state"], untrusted["files"]) == ("untrusted", [".mcp.json"])
    assert "not trusted" in run_swarm("doctor", cwd=repo).stdout
    record(find_project_config(repo))
    assert state()["state"] == "trusted"
