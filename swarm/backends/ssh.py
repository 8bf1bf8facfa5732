"""The `ssh` backend (`--backend ssh:[USER@]HOST[:PORT]`): a teammate's `swarm agent` runs on
another host, in a tmux session `swarm-<team>` there (a detached process where tmux is missing),
started and steered through the system's OpenSSH client.

Nothing from the team reaches a remote shell unquoted. The remote command line is always
`exec sh -c SCRIPT swarm-ssh ARG...`: a constant script (ssh_scripts.py) and shlex-quoted
arguments. The agent's environment and command travel as a script on ssh's stdin, so neither
values nor secrets appear in a command line on either host; on the remote host that script is a
0600 file removed as it starts. The agent runs under `env -i` (see ssh_scripts), so the user's
shell profile there cannot change what it runs with.

A remote member's pid means nothing here: its liveness comes from its heartbeat in the network
store, and signals go through ssh (`SIGNAL`, which checks the pid is still that member's agent).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from msgspec import Struct

from swarm import settings
from swarm.backends import ssh_scripts
from swarm.errors import BadInputError, OperationFailedError, SshError

PREFIX = "ssh:"
# What a spec may hold: an ssh user name, a host name, IPv4 or [IPv6], a port. Nothing that
# starts with `-` (ssh would read it as an option) and no spaces or shell characters.
_SPEC = re.compile(
    r"(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]{0,31})@)?"
    r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])"
    r"(?::(?P<port>[0-9]{1,5}))?\Z")
SPEC_HELP = "ssh:[USER@]HOST[:PORT]"
# Seconds an ssh call may take (connecting included) before it counts as failed.
CALL_TIMEOUT = 60.0
# Seconds a remote agent has to exit after SIGTERM before SIGKILL (as the local terminate).
TERM_GRACE = 3


class SshTarget(Struct, frozen=True):
    host: str
    user: str | None = None
    port: int | None = None

    @property
    def destination(self) -> str:
        host = self.host.strip("[]")
        return f"{self.user}@{host}" if self.user else host

    def __str__(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.host}{port}"


def parse_target(spec: str) -> SshTarget:
    """`ssh:[USER@]HOST[:PORT]` (the `ssh:` prefix optional) -> SshTarget, or a clear error."""
    text = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    if spec == "ssh" or not text:
        raise BadInputError(f"the ssh backend needs a host: --backend {SPEC_HELP}")
    match = _SPEC.match(text)
    if not match:
        raise BadInputError(f"bad ssh target {spec!r}: expected {SPEC_HELP} (a user, a host"
                            " name or address, a port; no spaces, no leading '-')")
    port = match["port"]
    if port is not None and not 0 < int(port) < 65536:
        raise BadInputError(f"bad ssh target {spec!r}: port {port} is not 1-65535")
    return SshTarget(host=match["host"], user=match["user"], port=int(port) if port else None)


def ssh_options() -> list[str]:
    """SWARM_SSH_OPTIONS as shell words (e.g. `-F cfg -i key -p 2222`)."""
    value = settings.raw("SWARM_SSH_OPTIONS")
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise BadInputError(f"SWARM_SSH_OPTIONS does not parse as shell words: {exc}") from None


def remote_swarm_argv() -> list[str]:
    """How a teammate's host starts swarm: SWARM_REMOTE_SWARM (shell words, e.g. an absolute
    path to a virtualenv's `swarm`), else `swarm` on the PATH a non-interactive ssh command
    gets there."""
    value = settings.raw("SWARM_REMOTE_SWARM") or "swarm"
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise BadInputError(f"SWARM_REMOTE_SWARM does not parse as shell words: {exc}") from None
    if not words:
        raise BadInputError("SWARM_REMOTE_SWARM is empty")
    return words


def ssh_argv(target: SshTarget, script: str, *args: str | int | None, tty: bool = False
             ) -> list[str]:
    """The local ssh command that runs `script` (a constant of ssh_scripts) on `target` with
    `args` as its positional parameters, each quoted for the remote login shell."""
    words = ["swarm-ssh", *("" if a is None else str(a) for a in args)]
    remote = "exec sh -c " + shlex.quote(script) + " " + shlex.join(words)
    # The spec's port comes before SWARM_SSH_OPTIONS (ssh keeps the first value it is given);
    # our defaults after them, so the user's options win over them.
    port = ["-p", str(target.port)] if target.port else []
    defaults = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=15"] if not tty else []
    return ["ssh", *port, *ssh_options(), *defaults, "-t" if tty else "-T", "--",
            target.destination, remote]


def run_ssh(target: SshTarget, script: str, *args: str | int | None, stdin: str | None = None,
            timeout: float = CALL_TIMEOUT) -> str:
    """Run a script on `target`; its stdout, or SshError with what ssh or the script said."""
    argv = ssh_argv(target, script, *args)
    try:
        done = subprocess.run(argv, input=(stdin or "").encode(), capture_output=True,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        raise SshError("ssh is not installed (the OpenSSH client is needed for ssh: "
                       "backends)") from None
    except subprocess.TimeoutExpired:
        raise SshError(f"ssh to {target} did not answer within {timeout:g}s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        detail = said[-1] if said else f"exit {done.returncode}"
        raise SshError(f"ssh {target}: {detail}")
    return done.stdout.decode(errors="replace").strip()


# Variables that describe this host, not the teammate's: never sent (the remote login has its
# own), and the ones that steer only this side.
_LOCAL_ONLY = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "VIRTUAL_ENV",
                         "PYTHONPATH", "SSL_CERT_FILE", "TERM", "TMUX", "TMUX_PANE",
                         "SWARM_HOME", "SWARM_BACKEND", "SWARM_SSH_OPTIONS",
                         "SWARM_REMOTE_SWARM", "SWARM_REMOTE_HOME"})


def remote_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a remote teammate is given: the spawner's choice minus this host's own paths, and
    SWARM_HOME = SWARM_REMOTE_HOME when that is set (else the remote default, ~/.swarm)."""
    out = {k: v for k, v in env.items() if k not in _LOCAL_ONLY}
    home = settings.raw("SWARM_REMOTE_HOME")
    if home:
        out["SWARM_HOME"] = home
    return out


def agent_script(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The script a remote pane runs (as `sh FILE`): removes its file, exports `env`, execs
    `argv`. Every value is quoted; names that are no shell names are dropped."""
    lines = ['rm -f -- "$0"']
    for key, value in sorted(env.items()):
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            lines.append(f"export {key}={shlex.quote(value)}")
    lines.append("exec " + shlex.join(argv))
    return "\n".join(lines) + "\n"


def agent_log_path(team: str, name: str) -> str:
    """The member's agent.log on its host ('' = the remote default under ~/.swarm): where
    paths.agent_log puts it on a network store (`hosts-local/`, the host's own files)."""
    home = settings.raw("SWARM_REMOTE_HOME").rstrip("/")
    return f"{home}/hosts-local/{team}/agents/{name}/agent.log" if home else ""


class SshBackend:
    """Pane ids are the remote tmux pane's (`%N`), or `hidden:NAME` where the host has no tmux."""

    type = "ssh"

    def __init__(self, team: str | None = None, host: str | None = None,
                 socket: str | None = None) -> None:
        if not host:
            raise BadInputError(f"the ssh backend needs a host: --backend {SPEC_HELP}")
        self.team = team
        self.target = parse_target(host)
        self.socket = socket

    def _team(self) -> str:
        if not self.team:
            raise BadInputError("the ssh backend needs a team for this operation")
        return self.team

    def is_available(self) -> bool:
        return shutil.which("ssh") is not None

    def is_running_inside(self) -> bool:
        return False

    def create_pane(self, name: str, color: str | None) -> str:
        pane = run_ssh(self.target, ssh_scripts.CREATE, self._team(), name, self.socket)
        if not (pane.startswith("%") or pane == f"hidden:{name}"):
            raise SshError(f"ssh {self.target}: no pane made for {name} (got {pane[:80]!r})")
        return pane

    def run_in_pane(self, pane_id: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
                    ) -> int | None:
        if not argv:
            raise BadInputError("nothing to run: empty command")
        name = env.get("SWARM_AGENT_ID", "").partition("@")[0] or pane_id.partition(":")[2]
        out = run_ssh(self.target, ssh_scripts.RUN, self._team(), name, self.socket, pane_id,
                      cwd or ".", agent_log_path(self._team(), name),
                      stdin=agent_script(argv, remote_env(env)))
        last = out.splitlines()[-1] if out else ""
        return int(last) if last.isdigit() else None

    def kill_pane(self, pane_id: str) -> bool:
        run_ssh(self.target, ssh_scripts.CLOSE, self._team(), "-", self.socket, pane_id)
        return True

    def is_pane_alive(self, pane_id: str) -> bool:
        return run_ssh(self.target, ssh_scripts.ALIVE, self._team(), "-", self.socket,
                       pane_id) == "yes"

    def close_team(self) -> int:
        """Team delete: the team's session on that host (its members were stopped first)."""
        out = run_ssh(self.target, ssh_scripts.CLOSE_TEAM, self._team(), "-", self.socket)
        return int(out) if out.isdigit() else 0


# -- steering a remote member (control, logs, attach, doctor) -------------------------------
def signal_agent(host: str, team: str, name: str, pid: int, sig: str,
                 escalate: bool = False, child_pgid: int | None = None) -> bool:
    """Send `sig` (INT, TERM, ...) to the member's agent on its host; with `escalate`, KILL it
    after TERM_GRACE seconds and end its Bash command's process group. False: it was gone."""
    out = run_ssh(parse_target(host), ssh_scripts.SIGNAL, team, name, "", pid, sig,
                  TERM_GRACE if escalate else None, child_pgid,
                  timeout=CALL_TIMEOUT + TERM_GRACE)
    return out.endswith("signalled")


def logs_argv(host: str, team: str, name: str, follow: bool) -> list[str]:
    """ssh argv that prints the member's agent.log on its host (follows it with `follow`)."""
    return ssh_argv(parse_target(host), ssh_scripts.LOGS, team, name, "",
                    agent_log_path(team, name), "-f" if follow else "")


def attach_argv(host: str, team: str, name: str, socket: str | None) -> list[str]:
    """ssh argv (with a terminal) that opens the team's session on `host` at `name`'s window."""
    return ssh_argv(parse_target(host), ssh_scripts.ATTACH, team, "-", socket, name, tty=True)


def remote_version(host: str) -> str:
    """`swarm --version` on `host`, as its teammates would run it (for `swarm doctor`)."""
    try:
        return run_ssh(parse_target(host), ssh_scripts.VERSION, *remote_swarm_argv(),
                       timeout=30)
    except SshError as exc:
        raise OperationFailedError(str(exc)) from None
