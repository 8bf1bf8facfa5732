"""`swarm doctor` through the real CLI: what it reports about tmux, the backend choice and its
reason, the API key, SWARM_HOME, and teams with dead or no running members."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path
from typing import Any

from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.helpers import one_line

TMUX = shutil.which("tmux")


def doctor(*args: str, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_swarm("doctor", *args, env=env, cwd=cwd)


def report(env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = doctor("--json", env=env)
    out: dict[str, Any] = json.loads(proc.stdout)
    # It fails when it finds a problem, and only then.
    assert proc.returncode == (1 if out["problems"] else 0), proc.stderr
    return out


def bin_dir(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only the given tools (no tmux unless asked), as symlinks or fakes."""
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for tool in tools:
        real = shutil.which(tool)
        if real:
            (directory / tool).symlink_to(real)
        else:  # e.g. osascript on Linux: a stand-in that is never run by doctor
            fake = directory / tool
            fake.write_text("#!/bin/sh\nexit 0\n")
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return str(directory)


def test_outside_tmux_with_tmux_installed_picks_tmux(swarm_home: Path) -> None:
    assert TMUX is not None  # this machine has tmux 3.3a
    version = subprocess.run([TMUX, "-V"], capture_output=True, text=True).stdout.strip()
    out = report()
    assert out["tmux"] == version and version.startswith("tmux ")
    assert out["inside_tmux"] is False
    assert (out["backend"], out["backend_reason"]) == (
        "tmux", "tmux is installed: teammates run in a detached tmux session")
    assert out["api_key"] is False
    assert out["default_model"] == "shell" and "no Anthropic credentials" in out["model_notice"]
    assert out["swarm_home_writable"] is True and out["swarm_home"] == str(swarm_home)
    assert out["teams"] == []
    assert not list(swarm_home.glob(".doctor-*"))  # the write probe cleans up after itself

    human = doctor()
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert lines[0] == f"ok  {'tmux'}: {version}"
    assert "ok  backend: tmux (tmux is installed: teammates run in a detached tmux session)" in lines
    assert any(line.startswith("--  default model: shell (no Anthropic credentials")
               for line in lines)


def test_auto_picks_hidden_when_tmux_is_not_on_path(tmp_path: Path) -> None:
    out = report({"PATH": bin_dir(tmp_path)})  # swarm itself runs by absolute path
    assert out["tmux"] is None
    assert out["backend"] == "hidden"
    assert out["backend_reason"] == "tmux is not installed and not in iTerm2: teammates run hidden"
    human = doctor(env={"PATH": bin_dir(tmp_path)})
    assert "--  tmux: not installed (teammates run hidden)" in human.stdout.splitlines()


def test_inside_tmux_iterm2_and_overrides(tmp_path: Path) -> None:
    inside = report({"TMUX": "/tmp/tmux-0/default,1234,0", "TMUX_PANE": "%0"})
    assert inside["inside_tmux"] is True
    assert inside["backend"] == "tmux" and "inside tmux" in inside["backend_reason"]

    iterm = report({"TERM_PROGRAM": "iTerm.app", "PATH": bin_dir(tmp_path, "osascript")})
    assert (iterm["iterm2"], iterm["osascript"], iterm["backend"]) == (True, True, "iterm2")

    forced = report({"SWARM_BACKEND": "hidden"})
    assert (forced["backend"], forced["backend_reason"]) == ("hidden",
                                                             "$SWARM_BACKEND asked for hidden")


def test_api_key_is_reported_present_but_never_printed() -> None:
    secret = "sk-ant-doctor-must-not-print-this"
    out = report({"ANTHROPIC_API_KEY": secret})
    assert out["api_key"] is True and out["default_model"] != "shell"
    for args in ((), ("--json",)):
        proc = doctor(*args, env={"ANTHROPIC_API_KEY": secret})
        assert proc.returncode == 0 and secret not in proc.stdout + proc.stderr


def test_unwritable_swarm_home_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = report({"SWARM_HOME": str(blocker / "home")})
    assert out["swarm_home_writable"] is False
    assert "Not a directory" in out["swarm_home"]
    human = doctor(env={"SWARM_HOME": str(blocker / "home")})
    assert human.returncode == 1  # a problem: it says so on its `!!` line
    assert any(line.startswith("!!  SWARM_HOME:") and line.endswith("(not writable)")
               for line in human.stdout.splitlines())


def test_teams_with_dead_and_stopped_members_are_reported(crew: Crew) -> None:
    crew.spawn("w1")
    crew.spawn("w2")
    crew.wait_state("w1", "idle")
    crew.wait_state("w2", "idle")
    proc = crew.cli("team", "create", "quiet")
    assert proc.returncode == 0, proc.stderr
    out = report()
    assert {t["team"]: (t["running"], t["dead"], t["stale"]) for t in out["teams"]} == {
        "crew": (["w1", "w2"], [], False), "quiet": ([], [], False)}

    pid = crew.procs["w1"].pid
    os.kill(pid, signal.SIGKILL)  # dies without a word: only its pid tells
    crew.procs["w1"].wait(10)
    assert not is_alive(pid)
    crew.cli("shutdown", "w2")
    crew.wait_state("w2", "exited")

    out = report()
    teams = {t["team"]: t for t in out["teams"]}
    assert teams["crew"]["dead"] == ["w1"] and teams["crew"]["running"] == []
    assert teams["crew"]["members"] == 2
    human = doctor().stdout.splitlines()
    assert ("!!  team crew: dead members w1 (`swarm respawn NAME` or `swarm team delete crew`)"
            in human)

    # Every member gone but none dead: a stale team, with the command that cleans it up.
    crew.team.remove_member("w1")  # only w2, shut down, remains
    out = report()
    teams = {t["team"]: t for t in out["teams"]}
    assert (teams["crew"]["dead"], teams["crew"]["stale"]) == ([], True)
    assert ("..  team crew: no running members (`swarm team delete crew` to clean up)"
            in doctor().stdout.splitlines())


def test_a_corrupt_team_file_is_reported_and_others_still_are(crew: Crew) -> None:
    paths.team_dir("broken").mkdir(parents=True)
    paths.team_config("broken").write_text("{not json")
    proc = doctor("--json")
    assert proc.returncode == 1, proc.stderr  # the corrupt team file is a problem
    teams = {t["team"]: t for t in json.loads(proc.stdout)["teams"]}
    assert set(teams) == {"broken", "crew"}
    assert "corrupt" in teams["broken"]["error"] and teams["crew"]["members"] == 0
    assert list(paths.team_dir("broken").glob("config.json.corrupt-*"))  # moved aside, kept


def test_doctor_exits_non_zero_when_it_prints_a_problem(swarm_home: Path) -> None:
    clean = run_swarm("doctor")
    assert clean.returncode == 0, (clean.stdout, clean.stderr)
    assert "!!" not in clean.stdout
    prices = swarm_home / "prices.json"
    prices.write_text("{")
    prices.chmod(0o600)  # only the one problem: its modes are swarm's own
    proc = run_swarm("doctor")
    assert "!!  prices:" in proc.stdout, proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert one_line(proc.stderr) == "swarm: error: doctor found 1 problem (the !! line above)"
    assert run_swarm("doctor", "--json").returncode == 1

