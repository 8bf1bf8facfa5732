"""tmux beyond one split window, as Claude Code's agent teams have it: the separate-window
layout (SWARM_TMUX_LAYOUT=window: each teammate its own window, for teams too large to split
one) and a teammate's pane hidden and shown again (`swarm pane hide|show NAME`).

- A new window goes to the leader's session inside tmux, else to the team's session
  `swarm-<team>`, named after the teammate.
- Hiding moves the pane (`break-pane`) to the session `swarm_hidden-<team>` (no team's own:
  those are `swarm-` + a name), where it keeps running; the pane option `@swarm_home` records
  where it was (session, window, its name, whether it was alone there). Showing moves it back:
  into that window when it is still there (joined, then laid out again: the leader's window
  main-vertical, the team's tiled), else as a window of that session, else of the team's
  session (made again when it is gone). Only panes with our team's marker are touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarm.backends import tmux_names as tn
from swarm.core.store.disk import locked

if TYPE_CHECKING:
    from swarm.backends.tmux import TmuxBackend

HIDDEN_PREFIX = "swarm_hidden-"
HOME_OPT = "@swarm_home"


def hidden_session(team: str) -> str:
    return HIDDEN_PREFIX + team


def new_window(backend: TmuxBackend, team: str, name: str, leader: str | None
               ) -> tuple[str, str, list[list[str]]]:
    """A window of its own for teammate `name`: (pane, window, layout commands: none)."""
    if leader is not None:
        session = backend._tmux(["display-message", "-p", "-t", leader, "#{session_id}"])
        target = f"{(session or [''])[0]}:"
    elif backend.session_exists():
        target = f"={tn.session_name(team)}:"
    else:
        pane_id, window_id = backend.new_session(tn.session_name(team), name, team)
        return pane_id, window_id, []
    created = backend._tmux(["new-window", "-d", "-t", target, "-n", name, *tn.NEW_PANE])
    pane_id, window_id = (created or [""])[0].split(tn.SEP)
    return pane_id, window_id, []


def hide(backend: TmuxBackend, pane_id: str) -> str:
    """Move a teammate's pane out of sight; what happened, in a few words."""
    team = backend._need_team()
    with locked(backend._lock()):
        info = backend._query(pane_id, "#{" + tn.TEAM_OPT + "}", "#{session_id}", "#{session_name}",
                              "#{window_id}", "#{window_name}", "#{window_panes}",
                              "#{" + tn.AGENT_OPT + "}")
        if info is None or not backend._owns(info[0]):
            return f"not a pane of team {team}"
        _, session_id, session, window_id, window_name, count, agent = info
        hidden = hidden_session(team)
        if session == hidden:
            return "already hidden"
        # Spaces apart (a query's fields are tab-separated), the window's name last: it may
        # have spaces of its own.
        home = " ".join((session_id, window_id, "1" if count == "1" else "0",
                         window_name.replace(tn.SEP, " ")))
        backend._tmux(["set-option", "-p", "-t", pane_id, HOME_OPT, home])
        target = f"={hidden}:"
        if backend._tmux(["has-session", "-t", target], check=False) is not None:
            backend._tmux(["break-pane", "-d", "-s", pane_id, "-t", target, "-n", agent])
        else:  # a new session always has a window: a placeholder, closed once the pane is in
            created = backend._tmux(["new-session", "-d", "-s", hidden, "-n", "placeholder",
                                     "-P", "-F", "#{window_id}", *tn.PLACEHOLDER])
            backend._tmux(["break-pane", "-d", "-s", pane_id, "-t", target, "-n", agent],
                          ["kill-window", "-t", (created or [""])[0]])
        if count != "1":
            _lay_out(backend, team, window_id)
    return "hidden"


def show(backend: TmuxBackend, pane_id: str) -> str:
    """Bring a hidden pane back where it was (see the module's doc)."""
    team = backend._need_team()
    with locked(backend._lock()):
        info = backend._query(pane_id, "#{" + tn.TEAM_OPT + "}", "#{session_name}",
                              "#{" + HOME_OPT + "}", "#{" + tn.AGENT_OPT + "}")
        if info is None or not backend._owns(info[0]):
            return f"not a pane of team {team}"
        if info[1] != hidden_session(team):
            return "not hidden"
        session_id, window_id, alone, window_name = (info[2].split(" ", 3) + ["", "", "1", ""])[:4]
        agent = info[3]
        if alone == "0" and _exists(backend, window_id, "#{window_id}"):
            backend._tmux(["join-pane", "-d", "-s", pane_id, "-t", window_id])
            _lay_out(backend, team, window_id)
        elif _exists(backend, session_id, "#{session_id}"):
            backend._tmux(["break-pane", "-d", "-s", pane_id, "-t", f"{session_id}:", "-n",
                           window_name or agent])
        elif backend.session_exists():
            backend._tmux(["break-pane", "-d", "-s", pane_id, "-t", f"={tn.session_name(team)}:",
                           "-n", window_name or agent])
        else:  # its session is gone: the team's own again, the placeholder making way for it
            placeholder, _ = backend.new_session(tn.session_name(team), window_name or agent, team)
            backend._tmux(["join-pane", "-d", "-s", pane_id, "-t", placeholder],
                          ["kill-pane", "-t", placeholder])
        backend._tmux(["set-option", "-p", "-u", "-t", pane_id, HOME_OPT], check=False)
    return "shown"


def _exists(backend: TmuxBackend, target: str, field: str) -> bool:
    if not target:
        return False
    out = backend._tmux(["display-message", "-p", "-t", target, field], check=False) or []
    return out[:1] == [target]


def _lay_out(backend: TmuxBackend, team: str, window_id: str) -> None:
    """A window a pane left or joined, laid out again: one with a pane not of the team (the
    leader's) main-vertical, the leader on the left; the team's own tiled."""
    out = backend._tmux(["list-panes", "-t", window_id, "-F", "#{" + tn.TEAM_OPT + "}"],
                        check=False)
    if not out:
        return
    commands = tn.main_vertical(window_id) if any(m != team for m in out) else tn.tiled(window_id)
    backend._tmux(*commands, check=False)
