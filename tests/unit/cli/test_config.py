"""`$SWARM_HOME/config.toml`: the user's lasting defaults (model, backend, permission mode,
allow/deny rules), below flags and variables; `swarm config show`; a bad file is one clear
error that starts nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.core.records.protocol import PermissionRequest
from swarm.core.store import paths
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.helpers import run_cli, wait_until


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(text)
    return path


def test_show_without_a_file_names_swarm_defaults(swarm_home: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "config", "show", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["exists"] is False and data["path"] == str(swarm_home / "config.toml")
    shown = {s["key"]: (s["value"], s["source"]) for s in data["settings"]}
    assert shown["backend"] == ("auto", "default")
    assert shown["permission_mode"] == ("default", "default")
    assert shown["model"][1] == "default"


def test_show_says_where_each_default_comes_from(swarm_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    write_config(swarm_home, 'model = "haiku"\nbackend = "hidden"\n'
                 'permission_mode = "acceptEdits"\nshiny = 1\n'
                 '[permissions]\nallow = ["Bash(git status:*)"]\ndeny = ["Bash(rm:*)"]\n')
    monkeypatch.setenv("SWARM_BACKEND", "tmux")  # the variable wins over the file
    code, out, err = run_cli(capsys, "config", "show")
    assert code == 0, err
    assert "unknown key shiny (ignored)" in err  # named, never fatal
    lines = [line.split() for line in out.splitlines()[2:]]
    assert ["model", "haiku", "config.toml"] in lines
    assert ["backend", "tmux", "$SWARM_BACKEND"] in lines
    assert ["permission_mode", "acceptEdits", "config.toml"] in lines
    assert ["permissions.allow", "Bash(git", "status:*)", "config.toml"] in lines
    assert ["permissions.deny", "Bash(rm:*)", "config.toml"] in lines


@pytest.mark.parametrize(("text", "expected"), [
    ("model = \n", "is not valid TOML"),
    ("model = 3\n", "model must be a non-empty string"),
    ("permissions = 1\n", "[permissions] must be a table"),
    ("[permissions]\nallow = \"Bash(ls:*)\"\n", "permissions.allow must be a list"),
])
def test_a_broken_file_is_one_error_naming_it(swarm_home: Path, text: str, expected: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(swarm_home, text)
    code, out, err = run_cli(capsys, "config", "show")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"swarm: error: {path}") and expected in line, line


@pytest.mark.slow
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


def test_the_lead_refuses_a_mode_from_the_file_it_cannot_take(
        swarm_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(swarm_home, 'permission_mode = "plan"\n')
    code, _, err = run_cli(capsys, "lead", "--headless", "--model", "scripted:x.json", "hi")
    assert code == 2
    assert err.strip() == (f"swarm: error: {path}: permission_mode must be one of default, "
                           "acceptEdits, auto, bypassPermissions, got 'plan'")


@pytest.mark.slow
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
