"""What the Bash rule tests share: the rule check as a tool call makes it, a project cwd, and the
checks of the protected-path tests (a command asks in every mode but bypass; it runs in real
bash)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.permissions import Decision
from swarm.core.shell.rules import check
from swarm.runtime.tools.registry import all_tools

TOOLS = all_tools()


def decide(tool: str, args: dict[str, Any], mode: str, cwd: Path, allow: list[str] | None = None,
           deny: list[str] | None = None) -> Decision:
    spec = TOOLS[tool]
    return check(tool, args, mode=mode, read_only=spec.read_only, edits_files=spec.edits_files,
                 cwd=cwd, allow=allow or [], deny=deny or [])


def bash(command: str, cwd: Path, mode: str = "default", allow: list[str] | None = None,
         deny: list[str] | None = None) -> Decision:
    return decide("Bash", {"command": command}, mode, cwd, allow, deny)


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / "src").mkdir(parents=True)
    return work


def run(command: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    """The command in real bash (the attack works, or the allowed command does)."""
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, (command, proc.stderr)


def asks(command: str, cwd: Path, allow: list[str], why: str = "") -> None:
    """Under these allow rules the command asks (saying `why`, when given)."""
    decision = bash(command, cwd, "default", allow=allow)
    assert decision.behavior == "ask", (command, decision.reason)
    assert why in decision.reason, (command, decision.reason)


def asks_everywhere_but_bypass(command: str, cwd: Path, allow: list[str], why: str = "protected",
                               under_bash_rule: bool = False) -> None:
    """The command asks in default and acceptEdits under `allow` (and, `under_bash_rule`, under
    a plain `Bash` allow rule too), and runs unasked only in bypassPermissions."""
    for mode in ("default", "acceptEdits"):
        decision = bash(command, cwd, mode, allow=allow)
        assert decision.behavior == "ask", (command, mode, decision.reason)
        assert why in decision.reason, (command, decision.reason)
    if under_bash_rule:
        assert bash(command, cwd, "default", allow=["Bash"]).behavior == "ask", command
    assert bash(command, cwd, "bypassPermissions").behavior == "allow", command
