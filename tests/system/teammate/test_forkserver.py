"""SWARM_FORKSERVER=1: hidden teammates forked from one preloaded parent (cli/forkserver.py)
behave as the ones the hidden backend starts itself: their own command line (agent_ancestor),
their commands' orphans adopted (the subreaper), SIGTERM ends them and they are reaped."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.store.liveness import agent_ancestor, is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_fixtures import stop_tree
from tests.support.cli_runner import SWARM
from tests.support.helpers import children_with, wait_until


@pytest.fixture
def team(swarm_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("SWARM_FORKSERVER", "1")
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    monkeypatch.chdir(tmp_path)
    subprocess.run([SWARM, "team", "create", "alpha"], check=True, capture_output=True)
    yield "alpha"
    for name in ("w1", "w2", "w3"):
        state = read_state("alpha", name)
        if state and state.pid and is_alive(state.pid, state.started_at):
            stop_tree(state.pid)
    # The parent by its socket, never a teammate's parent process: a teammate started without
    # the parent has init (pid 1) for its parent, and stopping init's tree stops the machine.
    for pid in _parents(swarm_home):
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


# A busy machine: the parent descheduled between its socket's bind and its listen.
SLOW_LISTEN = """import runpy, socket, time
listen = socket.socket.listen
def slow(self, *args):
    time.sleep(3)
    return listen(self, *args)
socket.socket.listen = slow
runpy.run_module("swarm.cli.forkserver", run_name="__main__")
"""


def test_the_parents_socket_appears_only_once_it_listens(swarm_home: Path) -> None:
    """A spawn waits for the socket's path, then asks at once: a path there before the parent
    listens was refused, and that teammate started without the parent."""
    from swarm.backends.forkserver import PAD, server_env, socket_path

    path = socket_path()
    assert path is not None
    server = subprocess.Popen([sys.executable, "-c", SLOW_LISTEN, str(path), PAD],
                              env=server_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(path.exists, timeout=60, interval=0.001, message="the socket's path")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(path))  # refused while the parent has bound but not listened
        assert server.poll() is None
    finally:
        stop_tree(server.pid)
        server.wait()
        path.unlink(missing_ok=True)


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
    lead = Team("alpha").inbox(LEAD_NAME, checked=False)
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

    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "0.5")  # passed on in the teammate's environment
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")  # it looks for its lead at each beat
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


# -- the parent holds no secret, and no teammate reads another's -------------

KEY = "sk-ant-w1-0123456789abcdef"
TOKEN = "deploy-w1-0123456789"
SCAN = '''import sys
pid, needle = sys.argv[1], sys.argv[2].encode()
try:
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    mem = open(f"/proc/{pid}/mem", "rb", 0)
except OSError as exc:
    sys.exit(print("denied", type(exc).__name__))
for line in maps:
    span, perms = line.split()[:2]
    start, end = (int(x, 16) for x in span.split("-"))
    try:
        mem.seek(start)
        chunk = mem.read(end - start) if "r" in perms else b""
    except (OSError, ValueError, OverflowError):
        continue
    if needle in chunk:
        sys.exit(print("found"))
print("not found")
'''


def _same_user_rights() -> list[str]:
    """A prefix that runs a command with what another process of the same user has: as root,
    no CAP_SYS_PTRACE (root's power to read any process) for the team and its commands."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("no setpriv to drop root's CAP_SYS_PTRACE")
    return [setpriv, "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace", "--"]


def _spawn_as(name: str, prefix: list[str], env: dict[str, str], prompt: str = "") -> int:
    extra = ["--prompt", prompt] if prompt else []
    proc = subprocess.run([*prefix, SWARM, "spawn", name, "--backend", "hidden", "--model",
                           "shell", "--permission-mode", "bypassPermissions", *extra],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    state = wait_until(lambda: (s := read_state("alpha", name)) and s.state in ("idle", "working")
                       and s, timeout=60, message=f"{name} started")
    assert state.pid is not None
    return state.pid


def _environ(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_a_teammate_spawned_with_no_secrets_reads_none_of_anothers(team: str,
                                                                    tmp_path: Path) -> None:
    """The issue's reading: w2, spawned with no secrets, reads w1's spawn-time API key and a
    SWARM_SECRET_VARS secret from /proc/$PPID/environ (their parent's environment, which every
    fork shares). Now the parent's environment holds none, each child gets its own after the
    fork, and the processes are not dumpable: no environ or mem of another for the same user."""
    prefix = _same_user_rights()
    secrets = {"ANTHROPIC_API_KEY": KEY, "SWARM_DEPLOY_TOKEN": TOKEN,
               "SWARM_SECRET_VARS": "SWARM_DEPLOY_TOKEN"}
    w1 = _spawn_as("w1", prefix, {**os.environ, **secrets})  # it starts the parent
    parent = psutil.Process(w1).ppid()
    (tmp_path / "scan.py").write_text(SCAN)
    python = sys.executable
    lines = ["tr '\\0' '\\n' < /proc/$PPID/environ > own.env",
             f"tr '\\0' '\\n' < /proc/{parent}/environ > parent.env",
             f"tr '\\0' '\\n' < /proc/{w1}/environ > peer.env",
             f"{python} scan.py {w1} {KEY} > peer.mem 2>&1",
             # Not dumpable, its /proc/PID/stat and cmdline still say who runs this command:
             f"env -u SWARM_AGENT_ID {SWARM} send team-lead from-w2 --summary s",
             f"env -u SWARM_AGENT_ID {SWARM} kill w1 2> kill.err; echo $? > kill.rc",
             f"{python} scan.py {parent} {KEY} > parent.mem 2>&1"]
    _spawn_as("w2", prefix, dict(os.environ), prompt="\n".join(f"$ {line}" for line in lines))
    wait_until(lambda: (tmp_path / "parent.mem").exists() and (
        tmp_path / "parent.mem").read_text().strip(), timeout=60, message="w2's reading")
    for name in ("own.env", "parent.env", "peer.env"):
        text = (tmp_path / name).read_text()
        assert KEY not in text and TOKEN not in text, (name, text)
    for name in ("peer.mem", "parent.mem"):
        assert (tmp_path / name).read_text().startswith("denied"), name
    assert psutil.Process(w1).ppid() == parent  # forked by the same parent, as before
    assert (tmp_path / "kill.rc").read_text().strip() == "2", (tmp_path / "kill.err").read_text()
    lead = Team("alpha").inbox(LEAD_NAME, checked=False)
    assert [m.sender for m in lead.messages() if m.text == "from-w2"] == ["w2"]
    if os.geteuid() == 0:  # root reads what no teammate can: the parent holds no secret
        for pid in (parent, w1):
            assert KEY not in _environ(pid) and TOKEN not in _environ(pid)
        scan = subprocess.run([python, str(tmp_path / "scan.py"), str(parent), KEY],
                              capture_output=True, text=True, timeout=120)
        assert scan.stdout.strip() == "not found", scan.stdout + scan.stderr
