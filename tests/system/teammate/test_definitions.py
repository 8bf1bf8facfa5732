"""Agent definitions: sources and priority, project discovery, tool narrowing, broken files.

The tests of tests/unit/core/agents/test_definitions.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarm.core.store import paths
from tests.unit.core.agents.test_definitions import (
    project,  # noqa: F401 - the fixtures
    write,
)

pytestmark = pytest.mark.usefixtures("trust_projects")



def test_real_executable_warns_and_exits_zero(project: Path, swarm_home: Path) -> None:
    bad = write(project / ".swarm/agents/bad.md", "---\nmax_turns: -3\n---\nx\n")
    write(project / ".swarm/agents/ok.md", "OK.\n")
    env = {**os.environ, "SWARM_HOME": str(swarm_home)}
    swarm_exe = Path(sys.executable).with_name("swarm")  # the installed console script
    assert swarm_exe.exists()
    run = subprocess.run([str(swarm_exe), "agents", "list", "--json"],
                         cwd=project / "src" / "deep", env=env, capture_output=True, text=True,
                         timeout=30)
    assert run.returncode == 0, run.stderr
    assert sorted(d["name"] for d in json.loads(run.stdout)) == [
        "code-reviewer", "explore", "general-purpose", "ok", "plan"]
    lines = run.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"swarm: warning: {bad}: field 'max_turns': ")

    missing = subprocess.run([str(swarm_exe), "agents", "show", "ghost"],
                             cwd=project, env=env, capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2
    assert missing.stderr.startswith("swarm: error: unknown agent type 'ghost'")
    assert "Traceback" not in missing.stderr



def test_builtin_lookup_imports_no_yaml_but_user_files_still_parse(
        tmp_path: Path, swarm_home: Path) -> None:
    code = ("import sys\n"
            "from swarm.core.agents.definitions import get_definition\n"
            "d = get_definition(sys.argv[1])\n"
            "print(d.name, d.source, d.tools, 'yaml' in sys.modules, 'frontmatter' in sys.modules,"
            " 'pydantic' in sys.modules)\n")
    env = {**os.environ, "SWARM_HOME": str(swarm_home)}

    def run(agent_type: str) -> str:
        proc = subprocess.run([sys.executable, "-c", code, agent_type], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert run("explore") == "explore builtin ['Read', 'Glob', 'Grep'] False False False"
    write(paths.user_agents_dir() / "mine.md", "---\ntools: [Read, Bash]\n---\nMine.\n")
    # A file is checked by pydantic (definition_fields): one problem per bad field.
    assert run("mine") == "mine user ['Read', 'Bash'] True True True"
