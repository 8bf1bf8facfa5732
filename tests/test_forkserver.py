"""SWARM_FORKSERVER=1: hidden teammates forked from one preloaded parent (cli/forkserver.py)
behave as the ones the hidden backend starts itself: their own command line (agent_ancestor),
their commands' orphans adopted (the subreaper), SIGTERM ends them and they are reaped."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.model.names import LEAD_NAME
from swarm.core.store.liveness import agent_ancestor, is_alive
from swarm.core.store.select import open_mailbox
from swarm.core.team.state import read_state
from tests.agent_fixtures import SWARM, stop_tree
from tests.helpers import children_with, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def team(swarm_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("SWARM_FORKSERVER", "1")
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    monkeypatch.chdir(tmp_path)
    subprocess.run([SWARM, "team", "create", "alpha"], check=True, capture_output=True)
    parents: set[int] = set()
    yield "alpha"
    for name in ("w1", "w2", "w3"):
        state = read_state("alpha", name)
        if state and state.pid and is_alive(state.pid, state.started_at):
            parents.add(psutil.Process(state.pid).ppid())
            stop_tree(state.pid)
    for pid in parents | _parents(swarm_home):
        stop_tree(pid)
    from swarm.backends.forkserver import socket_path

    path = socket_path()
    if path is not None:  # killed, the parent leaves its socket (a next start replaces it)
        path.unlink(missing_ok=True)
        path.with_suffix(".lock").unlink(missing_ok=True)


def _parents(home: Path) -> set[int]:
    """This test's preloaded parent, found by its socket's path (named after SWARM_HOME)."""
    from swarm.backends.forkserver import socket_path

    path = socket_path()
    return {p.pid for p in psutil.process_iter(["cmdline"])
            if path is not None and str(path) in (p.info["cmdline"] or [])}


def spawn(*names: str, prompt: str | None = None) -> dict[str, int]:
    extra = ["--prompt", prompt] if prompt else []
    procs = [subprocess.Popen([SWARM, "spawn", n, "--backend", "hidden", "--model", "shell",
                               "--permission-mode", "bypassPermissions", *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in names]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    pids = {}
    for name in names:
        state = wait_until(lambda n=name: (s := read_state("alpha", n)) and s.state == "idle" and s,
                           timeout=60, message=f"{name} idle")
        assert state.pid is not None
        pids[name] = state.pid
    return pids


def test_teammates_are_forked_by_one_parent_and_show_their_own_command_line(team: str) -> None:
    pids = spawn("w1", "w2", "w3")
    parents = {psutil.Process(pid).ppid() for pid in pids.values()}
    assert len(parents) == 1
    (parent,) = parents
    assert "swarm.cli.forkserver" in psutil.Process(parent).cmdline()
    for name, pid in pids.items():
        assert psutil.Process(pid).cmdline()[:4] == ["swarm", "agent", "--agent-id",
                                                      f"{name}@alpha"]
        assert agent_ancestor(pid) == f"{name}@alpha"


def test_a_forked_teammates_command_speaks_as_it_without_its_variable(team: str) -> None:
    """A lead-only check finds the teammate above its command through /proc, not its env."""
    spawn("w1", prompt="$ env -u SWARM_AGENT_ID swarm send team-lead from-w1 --summary s")
    lead = open_mailbox("alpha", LEAD_NAME)
    message = wait_until(lambda: next((m for m in lead.unread() if "from-w1" in m.text), None),
                         timeout=30)
    assert message.sender == "w1"


def test_an_orphan_of_a_forked_teammates_command_stays_its_descendant(team: str) -> None:
    pids = spawn("w1", prompt="$ setsid -f sleep 30 >/dev/null 2>&1")

    def adopted() -> list[psutil.Process]:
        return children_with(pids["w1"], lambda argv: argv[:2] == ["sleep", "30"],
                             recursive=False)

    wait_until(adopted, timeout=30, message="the orphaned sleep under its teammate")


def test_sigterm_ends_a_forked_teammate_which_is_reaped(team: str) -> None:
    pids = spawn("w1")
    os.kill(pids["w1"], signal.SIGTERM)
    wait_until(lambda: (s := read_state("alpha", "w1")) and s.state == "exited", timeout=30)

    def gone() -> bool:
        try:
            return psutil.Process(pids["w1"]).status() == psutil.STATUS_ZOMBIE and False
        except psutil.NoSuchProcess:
            return True

    wait_until(gone, timeout=10, message="the teammate reaped by its parent")


def test_a_forked_teammate_whose_lead_is_gone_leaves(team: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.core.team.team import Team

    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "0.5")  # passed on in the teammate's environment
    lead = subprocess.Popen(["sleep", "60"])
    try:
        Team.open(team).update(lambda config: setattr(config, "lead_pid", lead.pid))
        spawn("w1")
    finally:
        lead.kill()
        lead.wait()
    state = wait_until(lambda: (s := read_state("alpha", "w1")) and s.state == "exited" and s,
                       timeout=30, message="the orphan leaves")
    assert state.detail and "lead_gone" in state.detail
