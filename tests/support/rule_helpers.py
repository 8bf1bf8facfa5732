"""What the Bash rule tests share: the rule check as a tool call makes it, and a project cwd."""

from __future__ import annotations

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
