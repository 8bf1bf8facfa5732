"""The ssh backend: `ssh:` specs, the command lines it builds (nothing reaches a remote shell
unquoted), the file store refused, and its transport against a real sshd on loopback
(tests/support/sshd_fixtures.py). Teams running across "hosts" with Redis: test_ssh_teams.py.

The tests of tests/unit/backends/test_ssh.py that start processes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from swarm.backends.ssh import (
    SshBackend,
    signal_agent,
)
from swarm.errors import SshError
from tests.support.helpers import wait_until
from tests.support.sshd_fixtures import SshHost
from tests.unit.backends.test_ssh import NASTY


# -- the transport, against a real sshd -------------------------------------------------------
def test_a_pane_on_another_host_runs_with_its_env_and_is_steered(
        ssh_host: SshHost, tmp_path: Path) -> None:
    """Through real ssh: the pane is made in `swarm-<team>` there, the command runs with exactly
    the env given (nothing acted on), a signal reaches only that member's agent, and the pane
    closes. No store is involved at this level."""
    canary = tmp_path / "canary"
    out = tmp_path / "seen.json"
    backend = SshBackend(team="alpha", host=ssh_host.spec, socket=os.environ["SWARM_TMUX_SOCKET"])
    pane = backend.create_pane("w", "blue")
    assert pane.startswith("%")
    env = {"SWARM_AGENT_ID": "w@alpha", "SWARM_STORE": "redis://127.0.0.1:1/0",
           "PATH": "/nowhere", "SWARM_Q": NASTY[0].format(canary=canary)}
    # Looks like the member's agent to `ps` (its --agent-id), writes what it got, then waits.
    code = ("import json, os, sys, time; open(sys.argv[1], 'w').write(json.dumps("
            "[os.getcwd(), dict(os.environ)])); time.sleep(600)")
    argv = [sys.executable, "-c", code, str(out), "agent", "--agent-id", "w@alpha"]
    pid = backend.run_in_pane(pane, argv, env, str(tmp_path))
    assert pid
    cwd, seen = json.loads(wait_until(lambda: out.exists() and out.read_text(), timeout=20))
    assert cwd == str(tmp_path)
    assert seen["SWARM_Q"] == env["SWARM_Q"] and seen["SWARM_STORE"] == env["SWARM_STORE"]
    assert seen["SWARM_HOME"] == str(ssh_host.remote_home)
    assert seen["PATH"] != "/nowhere"  # that host's own PATH, not this one's
    assert "PYENV_ROOT" not in seen  # nothing from a shell profile (env -i)
    assert backend.is_pane_alive(pane)
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"swarm-agent.*{pid}"))
    # A signal for another member (or a reused pid) is not sent.
    assert not signal_agent(ssh_host.spec, "alpha", "other", pid, "TERM")
    assert backend.is_pane_alive(pane)
    assert signal_agent(ssh_host.spec, "alpha", "w", pid, "TERM", escalate=True)
    wait_until(lambda: not backend.is_pane_alive(pane), timeout=20, message="agent gone")
    assert backend.kill_pane(pane)
    proc = ssh_host.ssh("tmux", "-L", os.environ["SWARM_TMUX_SOCKET"], "list-panes", "-a")
    assert pane not in proc.stdout
    assert not canary.exists()



def test_an_unreachable_host_is_one_clear_error(ssh_host: SshHost) -> None:
    backend = SshBackend(team="alpha", host="root@127.0.0.1:1")  # nothing listens on port 1
    with pytest.raises(SshError, match=r"ssh root@127.0.0.1:1: .*(refused|closed)"):
        backend.create_pane("w", None)
