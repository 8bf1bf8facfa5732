"""`$SWARM_HOME/config.toml`: the user's lasting defaults (model, backend, permission mode,
allow/deny rules), below flags and variables; `swarm config show`; a bad file is one clear
error that starts nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import run_cli


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


def test_the_lead_refuses_a_mode_from_the_file_it_cannot_take(
        swarm_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(swarm_home, 'permission_mode = "plan"\n')
    code, _, err = run_cli(capsys, "lead", "--headless", "--model", "scripted:x.json", "hi")
    assert code == 2
    assert err.strip() == (f"swarm: error: {path}: permission_mode must be one of default, "
                           "acceptEdits, auto, bypassPermissions, got 'plan'")


