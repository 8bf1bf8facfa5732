"""The ssh backend through real processes: the agent script it writes, run by a real shell,
delivers the environment and argv exactly, and the `swarm` executable refuses a bad spec and
the file store (the specs and command lines in-process: tests/unit/backends/test_ssh.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from swarm.backends.resolve import resolve
from swarm.backends.ssh import (
    agent_script,
)
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from tests.support.agent_fixtures import error_lines
from tests.support.cli_runner import run_swarm
from tests.unit.backends.test_ssh import NASTY


def test_bad_spec_through_resolve_and_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_STORE", "redis://127.0.0.1:1/0")  # resolve never connects
    with pytest.raises(BadInputError, match="bad ssh target"):
        resolve("ssh:bad host")
    monkeypatch.setenv("SWARM_BACKEND", "ssh")
    with pytest.raises(BadInputError, match="needs a host"):
        resolve(None)
    monkeypatch.delenv("SWARM_BACKEND")
    monkeypatch.delenv("SWARM_STORE")  # the spec is checked before the store is
    Team.create("alpha")
    proc = run_swarm("spawn", "w", "--team", "alpha", "--backend", "ssh:-x", "--model", "shell")
    assert proc.returncode == 2
    assert error_lines(proc) == [error_lines(proc)[0]]
    assert "bad ssh target" in proc.stderr


# -- the file store is refused ----------------------------------------------------------------
@pytest.mark.parametrize("store", [None, "file"])
def test_ssh_backend_with_the_file_store_is_refused(store: str | None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    Team.create("alpha")
    env = {"SWARM_STORE": store} if store else {}
    monkeypatch.delenv("SWARM_STORE", raising=False)
    proc = run_swarm("spawn", "w", "--team", "alpha", "--backend", "ssh:build@hostb",
                     "--model", "shell", env=env)
    assert proc.returncode == 2, proc.stderr
    (line,) = error_lines(proc)
    assert "ssh backend needs a network store" in line and "SWARM_STORE=redis://" in line
    assert Team.open("alpha").config().member("w") is None  # nothing registered
    via_env = run_swarm("spawn", "w", "--team", "alpha", "--model", "shell",
                        env={**env, "SWARM_BACKEND": "ssh:hostb"})
    assert via_env.returncode == 2 and "network store" in via_env.stderr


def test_agent_script_delivers_env_and_argv_exactly(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The script a remote pane runs: names and values arrive byte for byte, no shell acts on
    them, and the script file removes itself."""
    canary = tmp_path / "canary"
    values = {f"SWARM_X{i}": v.format(canary=canary) for i, v in enumerate(NASTY)}
    values["ANTHROPIC_API_KEY"] = "sk-'$(touch " + str(canary) + ")'"
    values["BAD NAME"] = "dropped"
    dump = "import json, os, sys; print(json.dumps([sys.argv[1:], dict(os.environ)]))"
    argv = [sys.executable, "-c", dump, "agent", "--agent-id", "w@alpha", *NASTY]
    script = tmp_path / "agent.sh"
    script.write_text(agent_script(argv, values))
    out = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "sh", str(script)],
                         capture_output=True, text=True, timeout=30, check=True)
    got_argv, got_env = json.loads(out.stdout)
    assert got_argv == ["agent", "--agent-id", "w@alpha", *NASTY]
    assert {k: got_env[k] for k in values if k != "BAD NAME"} == {
        k: v for k, v in values.items() if k != "BAD NAME"}
    assert "BAD NAME" not in got_env
    assert not script.exists() and not canary.exists()
