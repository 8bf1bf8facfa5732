"""`run_swarm` (tests/support/cli_runner.py): a command forked from the preloaded interpreter is
what `subprocess.run([swarm, ...])` would give: its exit code, its output, the working
directory and environment asked for; a command over its time is killed and TimeoutExpired
raised; a command whose Python variables differ is started for real; the process guard hears
of each one."""

from __future__ import annotations

import json
import subprocess
import sys
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.support.cli_runner import SWARM, run_swarm
from tests.support.helpers import wait_until


def test_a_command_has_its_exit_code_output_directory_and_environment(
        swarm_home: Path, tmp_path: Path) -> None:
    other_home = tmp_path / "other-home"
    made = run_swarm("team", "create", "alpha", "--json", env={"SWARM_HOME": str(other_home)},
                     cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["name"] == "alpha"
    assert (other_home / "teams" / "alpha").is_dir() and not (swarm_home / "teams").exists()
    assert made.args == [SWARM, "team", "create", "alpha", "--json"]

    wrong = run_swarm("team", "create", "alpha", "--no-such-option")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert "No such option '--no-such-option'" in wrong.stderr
    assert run_swarm("team", "create", "--help").stdout.startswith("Usage: swarm team create")

    # Its working directory: a glob of `--files` is read there.
    added = run_swarm("tasks", "add", "job", "--files", "nothing-*.py", "--team", "alpha",
                      env={"SWARM_HOME": str(other_home)}, cwd=tmp_path)
    assert added.returncode == 0 and f"matches nothing under {tmp_path} yet" in added.stderr


def test_a_command_over_its_time_is_killed_and_timeout_expired_raised(swarm_home: Path) -> None:
    for args in (("team", "create", "alpha"), ("tasks", "add", "job", "--team", "alpha")):
        assert run_swarm(*args).returncode == 0
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        run_swarm("wait", "--team", "alpha", "--until", "tasks-done", "--timeout", "60",
                  timeout=1)
    assert raised.value.timeout == 1 and raised.value.cmd[1] == "wait"
    server = psutil.Process(forkserver._forkserver._forkserver_pid)  # type: ignore[attr-defined]
    wait_until(lambda: all(c.status() == psutil.STATUS_ZOMBIE for c in server.children()), 5,
               message="the timed-out command's process gone")


def test_a_command_whose_python_variables_differ_is_started_for_real(tmp_path: Path,
                                                                    swarm_home: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "started"
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    assert run_swarm("--version").returncode == 0 and not marker.exists()
    assert run_swarm("--version", env={"PYTHONPATH": str(site)}).returncode == 0
    assert marker.exists()


def test_the_process_guard_hears_of_each_command(swarm_home: Path) -> None:
    heard: list[tuple[Any, ...]] = []
    listening = True

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if listening and event == "subprocess.Popen":
            heard.append(args)

    sys.addaudithook(hook)  # for good: an audit hook cannot be removed, so it stops listening
    try:
        run_swarm("--version")
    finally:
        listening = False
    assert [args[0] for args in heard] == [SWARM]
