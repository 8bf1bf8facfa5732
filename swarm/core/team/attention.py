"""Attention: a teammate waits for the person (a permission request or a plan).

Whoever shows the question rings: a teammate of a team led from a shell (nobody else is
there), or `swarm lead` when the person answers its questions. Ringing is three things, each
best effort and none able to block or fail the caller:

- the terminal bell in the lead's terminal: BEL written to its tty (inside tmux that is the
  lead's pane, so tmux flags the window and passes the bell on to its clients);
- a message in the status line of every client of the lead's tmux server (`display-message`),
  or, in iTerm2 outside tmux, its notification escape (OSC 9). The text is team data: control
  characters become visible escapes and every `#` is doubled, so no tmux format (`#(cmd)`
  runs a command) and no escape sequence comes from it;
- the person's own `SWARM_NOTIFY_COMMAND`, run by /bin/sh with the minimal environment of a
  hook, as the person (without the asking teammate's SWARM_AGENT_ID); the request is data only: `SWARM_NOTIFY_*` variables and one JSON object on stdin,
  never part of the command line.

The lead's terminal is where its spawner ran: `swarm spawn` (or `swarm lead`) records its tty and
tmux pane in the teammate's environment (`terminal_env`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import subprocess
import threading
import time

from msgspec import Struct

from swarm import settings
from swarm.core.text.terminal import visible_line
from swarm.core.trust.child_env import minimal_env

log = logging.getLogger(__name__)

TTY_VAR, TMUX_VAR, ITERM_VAR = "SWARM_LEAD_TTY", "SWARM_LEAD_TMUX", "SWARM_LEAD_ITERM"
NOTIFY_TIMEOUT = 30.0  # seconds the notify command may take before it is killed
MESSAGE_LIMIT = 300


class Alert(Struct, frozen=True):
    """What the person is asked, as the notify command receives it (stdin JSON)."""

    team: str
    sender: str
    kind: str  # permission_request | plan_approval_request
    request_id: str
    text: str  # what is asked: the tool call, or "plan submitted"
    answer: str  # the shell command that answers it
    deadline: float | None = None  # epoch seconds it is denied at (None: it waits)

    def line(self) -> str:
        """One line for a status bar or a notification."""
        left = f"denied {until(self.deadline)}" if self.deadline is not None else "it waits"
        return (f"swarm: {self.sender}@{self.team} asks: {self.text} | answer: {self.answer}"
                f" | {left}")


def span(seconds: float) -> str:
    """`4m58s`, `7s` (never negative)."""
    minutes, rest = divmod(max(0, round(seconds)), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def until(deadline: float) -> str:
    """`at 14:55:03 (in 4m58s)`: when, and how long is left."""
    when = time.strftime("%H:%M:%S", time.localtime(deadline))
    return f"at {when} (in {span(deadline - time.time())})"


def terminal_env() -> dict[str, str]:
    """This process's terminal, for the teammates it spawns: where to ring for the person."""
    env: dict[str, str] = {}
    for fd in (0, 2, 1):
        with contextlib.suppress(OSError):
            if os.isatty(fd):
                env[TTY_VAR] = os.ttyname(fd)
                break
    server, pane = settings.tmux_env().split(",", 1)[0], settings.tmux_pane()
    if server and pane:
        env[TMUX_VAR] = f"{server},{pane}"
    elif settings.raw("TERM_PROGRAM") == "iTerm.app":
        env[ITERM_VAR] = "1"
    return env


def lead_terminal() -> dict[str, str]:
    """A teammate's record of the lead's terminal (what its spawner's `terminal_env` was)."""
    return {name: settings.raw(name) for name in (TTY_VAR, TMUX_VAR, ITERM_VAR)}


def ring(alert: Alert, where: dict[str, str]) -> None:
    """Bell, status message and notify command for `alert` in the terminal `where` describes
    (`terminal_env` or `lead_terminal`); never raises, never blocks."""
    text = visible_line(alert.line())[:MESSAGE_LIMIT]
    try:
        _bell(where.get(TTY_VAR, ""), text if where.get(ITERM_VAR) == "1" else None)
        _status_message(where.get(TMUX_VAR, ""), text)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("no bell for %s: %s", alert.request_id, exc)
    notify(alert)


def notify(alert: Alert) -> None:
    """Run SWARM_NOTIFY_COMMAND for `alert`, if set, in a thread of its own (never blocks)."""
    command = settings.notify_command()
    if command:
        threading.Thread(target=_notify, args=(command, alert), daemon=True,
                         name="swarm-notify").start()


def _bell(tty: str, iterm_text: str | None) -> None:
    """BEL (and iTerm2's OSC 9 notification) to the lead's terminal: only a character device
    of ours, opened without becoming its controlling terminal and without waiting."""
    if not tty.startswith("/dev/"):
        return
    info = os.stat(tty)
    if not stat.S_ISCHR(info.st_mode) or info.st_uid != os.geteuid():
        return
    data = b"\a" if iterm_text is None else f"\x1b]9;{iterm_text}\a".encode()
    fd = os.open(tty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _status_message(where: str, text: str) -> None:
    """The message in every client of the lead's tmux server (the person may be looking at
    the team's session rather than the lead's)."""
    server, _, pane = where.partition(",")
    if not server.startswith("/") or not pane:
        return
    base = ["tmux", "-S", server]
    listed = subprocess.run([*base, "list-clients", "-F", "#{client_name}"], capture_output=True,
                            text=True, timeout=5, stdin=subprocess.DEVNULL, check=False)
    # A format: `##` is a literal `#`, so `#(...)`, `#{...}` and `#[...]` in data stay text.
    message = text.replace("#", "##")
    for client in listed.stdout.split() if listed.returncode == 0 else []:
        subprocess.run([*base, "display-message", "-c", client, message],
                       capture_output=True, timeout=5, stdin=subprocess.DEVNULL, check=False)


def _notify(command: str, alert: Alert) -> None:
    data = {f: getattr(alert, f) for f in alert.__struct_fields__}
    env = minimal_env(os.environ, cwd=os.getcwd())
    # It runs for the person, not as the teammate that asks (its `swarm` commands are the
    # person's: `swarm permissions approve` is refused to a teammate).
    env.pop("SWARM_AGENT_ID", None)
    env.update({f"SWARM_NOTIFY_{k.upper()}": "" if v is None else str(v)
                for k, v in data.items()})
    env["SWARM_NOTIFY_MESSAGE"] = visible_line(alert.line())
    try:
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(data), text=True,
                              env=env, capture_output=True, timeout=NOTIFY_TIMEOUT,
                              start_new_session=True, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("SWARM_NOTIFY_COMMAND failed: %s", exc)
        return
    if done.returncode != 0:
        log.warning("SWARM_NOTIFY_COMMAND exited %s: %s", done.returncode,
                    visible_line(done.stderr.strip()[:200]))
