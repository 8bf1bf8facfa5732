"""`$SWARM_HOME/config.toml`: the user's lasting defaults (model, backend, permission mode,
allow/deny rules), below flags and variables; `swarm config show`; a bad file is one clear
error that starts nothing.

The tests of tests/unit/cli/test_config.py that start processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.core.records.protocol import PermissionRequest
from swarm.core.store import paths
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.helpers import wait_until
from tests.unit.cli.test_config import write_config


def test_spawn_takes_model_backend_and_mode_from_the_file(crew: Crew, swarm_home: Path) -> None:
    write_config(swarm_home, 'model = "shell"\nbackend = "hidden"\n'
                 'permission_mode = "acceptEdits"\n')
    proc = crew.cli("spawn", "w1", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["model"], out["backend"], out["permission_mode"]) == (
        "shell", "hidden", "acceptEdits")
    assert "config.toml (backend) asked for hidden" in out["backend_reason"]
    # A flag wins over the file.
    proc = crew.cli("spawn", "w2", "--permission-mode", "default", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["permission_mode"] == "default"



@pytest.mark.parametrize(("text", "expected"), [
    ('permission_mode = "sometimes"\n', "permission_mode must be one of"),
    ('[permissions]\ndeny = ["Bash(rm:*)", "Nope(("]\n', "permissions.deny: invalid rule"),
])
def test_spawn_with_a_bad_value_in_the_file_starts_nothing(crew: Crew, swarm_home: Path,
                                                           text: str, expected: str) -> None:
    path = write_config(swarm_home, text)
    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "shell")
    assert proc.returncode == 2, proc.stderr
    (line,) = error_lines(proc)
    assert line.startswith(f"swarm: error: {path}") and expected in line, line
    assert [m.name for m in crew.team.members()] == ["team-lead"]
    assert not paths.agent_dir(crew.team.name, "w1").exists()



def test_a_lasting_allow_rule_runs_without_asking_and_a_deny_holds_in_bypass(
        crew: Crew, swarm_home: Path) -> None:
    write_config(swarm_home, '[permissions]\nallow = ["Bash(echo:*)"]\n'
                 'deny = ["Bash(touch:*)"]\n')
    crew.spawn("asker", "$ echo lasting-ok", permission_mode="default")
    notes = crew.wait_idle_notes("asker", 1)
    assert notes[0].completed_status != "failed"
    assert not [m for m in crew.lead_messages() if isinstance(m.structured(), PermissionRequest)]
    assert any("lasting-ok" in m.text for m in crew.lead_messages())
    # Without the file's rule the same teammate asks: the rule, not the mode, allowed it.
    crew.spawn("bold", "$ touch made-by-bold", permission_mode="bypassPermissions")
    wait_until(lambda: any(m.sender == "bold" and "denied" in m.text.lower()
                           for m in crew.lead_messages()), 15,
               message=f"bold's denial (log: {crew.log('bold')[-600:]})")
    assert not (crew.workdir / "made-by-bold").exists()
