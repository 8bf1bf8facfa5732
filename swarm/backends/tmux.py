"""The `tmux` backend (libtmux): each teammate is the own process of a tmux pane.

Outside tmux the team gets a dedicated session `swarm-<team>` (window `swarm-view`, tiled);
inside tmux the leader's window is split (leader left 30%, teammates right 70%). With
SWARM_TMUX_LAYOUT=window each teammate gets a window of its own instead, and a pane can be
hidden and shown again (tmux_windows.py). Panes carry the pane options
`@swarm_team`/`@swarm_agent`; nothing without our team's marker is ever killed, so a stale or
reused pane id cannot take a user's pane down with it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from libtmux import exc
from libtmux.server import Server

from swarm import settings
from swarm.backends.shellenv import discard, secret_names, secrets_prelude, split_env
from swarm.backends.tmux_names import (
    AGENT_OPT,
    NEW_PANE,
    PLACEHOLDER,
    SEP,
    TEAM_OPT,
    main_vertical,
    session_name,
    tiled,
)
from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir, locked
from swarm.errors import BadInputError, TmuxError

WINDOW_NAME = "swarm-view"
COLOR_OPT = "@swarm_color"
# A session-level marker gets its own name: pane formats fall back to session options, so a
# session-level @swarm_team would make every pane in the session look like ours.
SESSION_OPT = "@swarm_session_team"
TEAMMATE_WIDTH = "70%"
# Big enough that 8+ tiled panes fit before any client attaches (then tmux resizes it).
DETACHED_SIZE = ("200", "50")
BORDER_FORMAT = (
    "#{?#{" + AGENT_OPT + "},#[fg=#{" + COLOR_OPT + "}#,bold] #{" + AGENT_OPT
    + "} #[default], #{pane_title} }"
)
_PANE_ID = re.compile(r"%\d+\Z")
_COLOR = re.compile(r"(#[0-9a-fA-F]{6}|colou?r\d{1,3}|[a-z]+)\Z")


def tmux_color(color: str | None) -> str:
    """Map swarm's palette (rich names like `bright_blue`) to a tmux colour; unknown -> default."""
    if not color:
        return "default"
    value = color.strip().lower().replace("_", "")
    return value if _COLOR.match(value) else "default"


def _server(socket: str | None) -> Server:
    if socket and "/" in socket:
        return Server(socket_path=socket)
    return Server(socket_name=socket) if socket else Server()


def _socket_path(socket: str | None) -> str:
    """Where tmux puts the socket for `-L socket` (or `-S path`), as tmux itself computes it."""
    if socket and "/" in socket:
        return os.path.realpath(socket)
    base = Path(settings.tmux_tmpdir()) / f"tmux-{os.geteuid()}"
    return os.path.realpath(base / (socket or "default"))


def _env_server_path() -> str | None:
    value = settings.tmux_env()
    path = value.split(",", 1)[0]
    return os.path.realpath(path) if path else None


def tmux_argv(socket: str | None) -> list[str]:
    """`tmux` with the socket option that reaches `socket`'s server."""
    return ["tmux"] + (["-S", socket] if socket and "/" in socket
                       else ["-L", socket] if socket else [])


def inside_server(socket: str | None) -> bool | None:
    """Inside tmux: True when this process runs on `socket`'s server, False on another one;
    None outside tmux."""
    here = _env_server_path()
    return None if not here else here == _socket_path(socket)


class TmuxBackend:
    type = "tmux"

    def __init__(self, team: str | None = None, socket: str | None = None) -> None:
        self.team = team
        # No explicit socket but inside tmux: the server we are in (it may not be the default).
        self.socket = socket or _env_server_path()
        self.server = _server(self.socket)

    # -- plumbing ---------------------------------------------------------------------------
    def _tmux(self, *commands: Sequence[str], check: bool = True) -> list[str] | None:
        """Run tmux commands in one client call; stdout lines, or None if it failed unchecked."""
        argv: list[str] = []
        for command in commands:
            if argv:
                argv.append(";")
            argv.extend(_literal(arg) for arg in command)
        try:
            result = self.server.cmd(*argv)
        except exc.TmuxCommandNotFound as error:
            if check:
                raise TmuxError("tmux is not installed (not on PATH)") from error
            return None
        if result.returncode == 0:
            return list(result.stdout)
        if check:
            detail = "; ".join(result.stderr) or f"exit {result.returncode}"
            raise TmuxError(f"tmux {commands[0][0]} failed: {detail}")
        return None

    def _query(self, target: str, *fields: str) -> list[str] | None:
        """Tab-separated formats of one pane; None when no such pane (or no server)."""
        if not _PANE_ID.match(target):  # never let "alice" resolve to some session or window
            return None
        # display-message expands against *no* pane (or the client's) when the target is
        # missing, so the pane id is read back and compared.
        spec = SEP.join(("#{pane_id}", *fields))
        out = self._tmux(["display-message", "-p", "-t", target, spec], check=False)
        row = out[0].split(SEP) if out else []
        return row[1:] if row and row[0] == target else None

    def _owns(self, marker: str) -> bool:
        # Without a team (an old caller), any swarm-marked pane; never an unmarked one.
        return marker == self.team if self.team else bool(marker)

    def _need_team(self) -> str:
        if not self.team:
            raise BadInputError("the tmux backend needs a team for this operation")
        return self.team

    def _lock(self) -> Path:
        lock = paths.pane_lock()
        ensure_dir(lock.parent)
        return lock

    # -- PaneBackend ------------------------------------------------------------------------
    def is_available(self) -> bool:
        return shutil.which("tmux") is not None

    def is_running_inside(self) -> bool:
        return bool(settings.tmux_env())

    def create_pane(self, name: str, color: str | None) -> str:
        team = self._need_team()
        own_window = settings.tmux_layout() == "window"
        with locked(self._lock()):  # splits and re-layouts of concurrent spawns never interleave
            leader = self._leader_window()
            if own_window:
                from swarm.backends.tmux_windows import new_window

                pane_id, window_id, layout = new_window(self, team, name,
                                                        leader[0] if leader else None)
            elif leader:
                pane_id, window_id, layout = self._split_leader_window(*leader)
            else:
                pane_id, window_id, layout = self._split_team_session(team)
            self._tmux(
                ["set-option", "-p", "-t", pane_id, TEAM_OPT, team],
                ["set-option", "-p", "-t", pane_id, AGENT_OPT, name],
                ["set-option", "-p", "-t", pane_id, COLOR_OPT, tmux_color(color)],
                ["select-pane", "-t", pane_id, "-T", name.replace("#", "##")],
                ["set-option", "-w", "-t", window_id, "pane-border-status", "top"],
                ["set-option", "-w", "-t", window_id, "pane-border-format", BORDER_FORMAT],
                *layout,
            )
        return pane_id

    def run_in_pane(
        self, pane_id: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> int | None:
        if not argv:
            raise BadInputError("nothing to run: empty command")
        if not os.path.isdir(cwd):  # tmux would silently fall back to $HOME
            raise BadInputError(f"working directory {cwd!r} does not exist")
        info = self._query(pane_id, "#{" + TEAM_OPT + "}")
        if info is None or not self._owns(info[0]):
            raise TmuxError(f"pane {pane_id} is not a swarm pane of team {self.team!r}")
        plain, secret = split_env(env)
        prelude, secret_file = secrets_prelude(secret)
        # /bin/sh (not the user's shell) so the quoting is POSIX; `exec` so pane_pid is the agent.
        script = prelude + "exec " + shlex.join(argv)
        env_args = [arg for key, value in plain.items() for arg in ("-e", f"{key}={value}")]
        try:
            out = self._tmux(
                # remain-on-exit first: an agent that dies at once still leaves its output.
                ["set-option", "-p", "-t", pane_id, "remain-on-exit", "on"],
                ["respawn-pane", "-k", "-c", cwd.replace("#", "##"), *env_args, "-t", pane_id,
                 "/bin/sh", "-c", script],
                ["display-message", "-p", "-t", pane_id, "#{pane_pid}"],
            )
        except TmuxError:
            discard(secret_file)
            raise
        return int(out[-1]) if out and out[-1].isdigit() else None

    def kill_pane(self, pane_id: str) -> bool:
        with locked(self._lock()):
            info = self._query(pane_id, "#{" + TEAM_OPT + "}", "#{session_name}",
                               "#{" + SESSION_OPT + "}", "#{window_id}")
            if info is None or not self._owns(info[0]):
                return False
            if self._tmux(["kill-pane", "-t", pane_id], check=False) is None:
                return False
            self._after_kill(*info)
        return True

    def is_pane_alive(self, pane_id: str) -> bool:
        info = self._query(pane_id, "#{" + TEAM_OPT + "}", "#{pane_dead}")
        return info is not None and self._owns(info[0]) and info[1] != "1"

    def hide_pane(self, pane_id: str) -> str:
        """Move a teammate's pane out of sight, still running (tmux_windows.hide)."""
        from swarm.backends.tmux_windows import hide

        return hide(self, pane_id)

    def show_pane(self, pane_id: str) -> str:
        """Bring a hidden pane back where it was (tmux_windows.show)."""
        from swarm.backends.tmux_windows import show

        return show(self, pane_id)

    # -- team-wide --------------------------------------------------------------------------
    def team_panes(self) -> list[str]:
        """Ids of every pane on this server marked for the team (any session or window)."""
        team = self._need_team()
        out = self._tmux(["list-panes", "-a", "-F", "#{pane_id}" + SEP + "#{" + TEAM_OPT + "}"],
                         check=False) or []
        return [line.split(SEP)[0] for line in out if line.split(SEP)[1:] == [team]]

    def session_exists(self) -> bool:
        """The team's detached session exists (and is ours: it carries the session marker)."""
        team = self._need_team()
        out = self._tmux(["list-panes", "-s", "-t", _session_target(team), "-F",
                          "#{" + SESSION_OPT + "}"], check=False)
        return out is not None and out[:1] == [team]

    def close_team(self) -> int:
        """Team delete: the team's own session and its marked panes elsewhere; nothing else."""
        team = self._need_team()
        killed = 0
        with locked(self._lock()):
            if self.session_exists():
                self._tmux(["kill-session", "-t", _session_target(team)], check=False)
                killed += 1
            for pane_id in self.team_panes():  # e.g. splits of the leader's window
                if self._tmux(["kill-pane", "-t", pane_id], check=False) is not None:
                    killed += 1
        return killed

    # -- where a person sees the team (`swarm attach`) -----------------------------------------
    def team_window(self) -> tuple[str, str, str] | None:
        """(target, session name, window id) where the team shows on this server: its own
        session, else the window its panes split (the leader's); None when neither is there."""
        team = self._need_team()
        fields = ("#{" + TEAM_OPT + "}", "#{session_name}", "#{window_id}", "#{" + SESSION_OPT + "}")
        out = self._tmux(["list-panes", "-a", "-F", SEP.join(fields)], check=False) or []
        rows = [row for row in (line.split(SEP) for line in out) if row[0] == team]
        own = [row for row in rows if row[1] == session_name(team) and row[3] == team]
        if own:
            return _session_target(team), own[0][1], own[0][2]
        return (rows[0][2], rows[0][1], rows[0][2]) if rows else None

    def pane_place(self, pane_id: str) -> tuple[str, str] | None:
        """(session name, window id) of any pane (the one a command runs in)."""
        info = self._query(pane_id, "#{session_name}", "#{window_id}")
        return (info[0], info[1]) if info else None

    def switch_client(self, target: str) -> None:
        """Show `target` in the client of the pane we run in (no new, nested client)."""
        self._tmux(["switch-client", "-t", target])

    # -- layout -----------------------------------------------------------------------------
    def _leader_window(self) -> tuple[str, list[list[str]]] | None:
        """(leader pane, rows of its window's panes) when we run inside a pane of this server."""
        leader = settings.tmux_pane()
        here = _env_server_path()
        if not (here and _PANE_ID.match(leader) and here == _socket_path(self.socket)):
            return None
        fields = ("#{pane_id}", "#{window_id}", "#{" + TEAM_OPT + "}", "#{pane_height}")
        out = self._tmux(["list-panes", "-t", leader, "-F", SEP.join(fields)], check=False)
        rows = [line.split(SEP) for line in out or []]
        # A teammate spawning from its own pane is no leader: it goes to the team session.
        if not any(row[0] == leader and not row[2] for row in rows):
            return None
        return leader, rows

    def _split_leader_window(
        self, leader: str, panes: list[list[str]]
    ) -> tuple[str, str, list[list[str]]]:
        window_id = panes[0][1]
        mates = [p for p in panes if p[2] == self.team and p[0] != leader]
        if not mates:  # first teammate: the right 70% of the leader's pane
            return self._split(leader, "-h", "-l", TEAMMATE_WIDTH), window_id, []
        tallest = max(mates, key=lambda p: int(p[3]))
        return self._split(tallest[0], "-v"), window_id, main_vertical(window_id)

    def _split_team_session(self, team: str) -> tuple[str, str, list[list[str]]]:
        session = session_name(team)
        fields = ("#{window_id}", "#{window_name}", "#{pane_id}", "#{pane_width}",
                  "#{pane_height}")
        out = self._tmux(["list-panes", "-s", "-t", _session_target(team), "-F", SEP.join(fields)],
                         check=False)
        rows = [line.split(SEP) for line in out or []]
        rows = [row for row in rows if row[1] == WINDOW_NAME]
        if out is None:  # no session yet: its first pane is this teammate's
            pane_id, window_id = self.new_session(session, WINDOW_NAME, team)
        elif not rows:  # the user closed our window but kept the session
            created = self._tmux(
                ["new-window", "-d", "-t", _session_target(team), "-n", WINDOW_NAME, *NEW_PANE])
            pane_id, window_id = (created or [""])[0].split(SEP)
        else:
            largest = max(rows, key=lambda r: int(r[3]) * int(r[4]))
            wide = int(largest[3]) > 2 * int(largest[4])  # cells are ~1:2, split the long side
            return self._split(largest[2], "-h" if wide else "-v"), largest[0], tiled(largest[0])
        return pane_id, window_id, tiled(window_id)

    def new_session(self, session: str, window: str, marker: str | None) -> tuple[str, str]:
        """A detached session whose one pane runs the placeholder: (pane, window). `marker`:
        the team whose own session it is (SESSION_OPT)."""
        # A server started here copies our environment into its global one, where every
        # later pane would inherit it: secrets are taken back out at once.
        starting = not self.server.is_alive()
        created = self._tmux(
            ["new-session", "-d", "-s", session, "-n", window, "-x", DETACHED_SIZE[0],
             "-y", DETACHED_SIZE[1], *NEW_PANE],
            *([["set-option", "-t", f"={session}:", SESSION_OPT, marker]] if marker else []),
            *([["set-environment", "-g", "-u", name] for name in secret_names(os.environ)]
              if starting else []),
        )
        pane_id, window_id = (created or [""])[0].split(SEP)
        return pane_id, window_id

    def _split(self, target: str, *how: str) -> str:
        out = self._tmux(["split-window", "-d", *how, "-t", target, "-P", "-F", "#{pane_id}",
                          *PLACEHOLDER])
        return (out or [""])[0]

    def _after_kill(self, team: str, session: str, session_team: str, window_id: str) -> None:
        """Drop the team session once its last teammate is gone; otherwise re-lay the rest."""
        if session == session_name(team) and session_team == team:
            out = self._tmux(["list-panes", "-s", "-t", _session_target(team), "-F",
                              "#{" + TEAM_OPT + "}"], check=False)
            if out is not None and team not in out:
                self._tmux(["kill-session", "-t", _session_target(team)], check=False)
            elif out:
                self._tmux(tiled(window_id)[0], check=False)
            return
        out = self._tmux(["list-panes", "-t", window_id, "-F", "#{" + TEAM_OPT + "}"],
                         check=False)
        if out and team in out and len(out) > 2:
            self._tmux(*main_vertical(window_id), check=False)


def _literal(arg: str) -> str:
    """tmux reads a trailing `;` in any argument as a command separator; `\\;` keeps it text."""
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def _session_target(team: str) -> str:
    """Exact-match target: `swarm-a` must never resolve to `swarm-ab` by prefix."""
    return "=" + session_name(team) + ":"
