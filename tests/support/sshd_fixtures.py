"""`ssh_host`: "another host" for the ssh backend's tests, a real OpenSSH server on a free
loopback port with its own keys and config (all in the test's tmp dir), stopped after the test.

The client side is a config file for `ssh -F` (our key, no host key prompts, no password
prompts), handed to swarm as SWARM_SSH_OPTIONS. Tests run as root, whose login shell here is
bash: bash reads ~/.bashrc for a command run by sshd when it is a top-level shell (no SHLVL set),
and root's runs pyenv's set-up, which can take a minute. The server's `SetEnv SHLVL=1` makes the
remote login shell a nested one, so no profile runs and the test stays fast; swarm's remote
command never relies on it either way.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import wait_until

SSHD = "/usr/sbin/sshd"  # sshd re-executes itself: it needs its absolute path


@dataclass(frozen=True)
class SshHost:
    spec: str  # what `--backend` takes after `ssh:`: root@127.0.0.1:PORT
    port: int
    client_config: Path  # for `ssh -F`
    remote_home: Path  # SWARM_HOME of teammates "there"
    log: Path  # sshd's own log (-e), for a failing test's message

    def ssh(self, *command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a command there the way swarm does (our config, batch mode)."""
        return subprocess.run(["ssh", "-F", str(self.client_config), "-p", str(self.port),
                               "root@127.0.0.1", *command], capture_output=True, text=True,
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            return conn.recv(4).startswith(b"SSH-")
    except OSError:
        return False


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "swarm-test", "-f",
                    str(path)], check=True, capture_output=True, timeout=30)


# What a host without tmux offers the remote scripts and the agent (symlinks to the real ones).
TOOLS = ("sh", "bash", "env", "mktemp", "cat", "rm", "mkdir", "dirname", "setsid", "nohup",
         "uname", "ps", "sleep", "tail", "echo", "printf", "ls", "true")


def _bin_without_tmux(directory: Path) -> Path:
    directory.mkdir()
    for tool in TOOLS:
        real = shutil.which(tool)
        if real:
            (directory / tool).symlink_to(real)
    return directory


@pytest.fixture
def ssh_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             request: pytest.FixtureRequest) -> Iterator[SshHost]:
    """`ssh_host`; parametrized indirectly with "no-tmux", a host whose PATH has no tmux."""
    if not (os.path.exists(SSHD) and shutil.which("ssh") and shutil.which("ssh-keygen")):
        pytest.skip("OpenSSH (server and client) is not installed")
    if os.geteuid() != 0:
        pytest.skip("the test sshd logs in as root (tests run as root in CI)")
    base = tmp_path / "ssh"
    base.mkdir(mode=0o700)
    _keygen(base / "host_key")
    _keygen(base / "client_key")
    (base / "authorized_keys").write_text((base / "client_key.pub").read_text())
    port = _free_port()
    server_config = base / "sshd_config"
    server_config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {base / 'host_key'}",
        f"AuthorizedKeysFile {base / 'authorized_keys'}", f"PidFile {base / 'sshd.pid'}",
        "UsePAM no", "StrictModes no", "PermitRootLogin prohibit-password",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PrintMotd no",
        # SHLVL: see the module's docstring (no ~/.bashrc for the remote shell).
        "SetEnv SHLVL=1" + (f" PATH={_bin_without_tmux(base / 'bin')}"
                            if getattr(request, "param", None) == "no-tmux" else ""),
        "LogLevel ERROR", ""]))
    client_config = base / "ssh_config"
    client_config.write_text("\n".join([
        "Host *", f"  IdentityFile {base / 'client_key'}", "  IdentitiesOnly yes",
        "  StrictHostKeyChecking no", f"  UserKnownHostsFile {base / 'known_hosts'}",
        "  BatchMode yes", "  LogLevel ERROR", ""]))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    log = base / "sshd.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(server_config)],
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    remote_home = tmp_path / "remote-home"
    try:
        wait_until(lambda: _answers(port) or server.poll() is not None, timeout=15,
                   message=f"sshd on port {port}")
        if server.poll() is not None:
            raise AssertionError(f"sshd did not start: {log.read_text()}")
        monkeypatch.setenv("SWARM_SSH_OPTIONS", f"-F {client_config}")
        # "There" starts this checkout's swarm, with a SWARM_HOME of its own.
        monkeypatch.setenv("SWARM_REMOTE_SWARM", str(Path(sys.executable).parent / "swarm"))
        monkeypatch.setenv("SWARM_REMOTE_HOME", str(remote_home))
        yield SshHost(spec=f"root@127.0.0.1:{port}", port=port, client_config=client_config,
                      remote_home=remote_home, log=log)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
