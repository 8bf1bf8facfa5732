"""`swarm spawn` in-process (swarm/cli/spawn.py): bad input is exit 2, one line, nothing registered.

The tests of tests/unit/cli/test_spawn.py that start processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.agent_fixtures import Crew
from tests.support.helpers import (
    CaptureFixture,
    one_line,
    run_cli,
)


def test_an_untrusted_projects_definition_is_named_with_swarm_trust(
        crew: Crew, capsys: CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    (project / ".swarm" / "agents").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    definition = project / ".swarm" / "agents" / "iso.md"
    definition.write_text("---\nname: iso\ndescription: isolated\n---\nWork alone.\n")
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "spawn", "w1", "--agent-type", "iso", "--model", "shell")
    assert code == 2, (out, err)
    line = one_line(err)
    assert line.startswith("swarm: error: unknown agent type 'iso'"), line
    assert (f"{definition} is ignored: the project is not trusted (`swarm trust` reviews"
            " it)") in line, line
