"""tmux's vocabulary shared by the tmux backend (backends.tmux) and its windows
(backends.tmux_windows): the team's session name, the pane options that mark swarm's panes, the
placeholder process of a new pane, and the two layouts."""

from __future__ import annotations

SESSION_PREFIX = "swarm-"
TEAM_OPT = "@swarm_team"
AGENT_OPT = "@swarm_agent"
LEADER_WIDTH = "30%"
# The pane's process until run_in_pane replaces it: quiet, harmless, and no user shell.
PLACEHOLDER = ("sleep", "2147483647")
NEW_PANE = ["-P", "-F", "#{pane_id}\t#{window_id}", *PLACEHOLDER]  # a new pane: its ids
SEP = "\t"  # between the fields of a tmux format's output


def session_name(team: str) -> str:
    return SESSION_PREFIX + team


def tiled(window_id: str) -> list[list[str]]:
    return [["select-layout", "-t", window_id, "tiled"]]


def main_vertical(window_id: str) -> list[list[str]]:
    return [["set-option", "-w", "-t", window_id, "main-pane-width", LEADER_WIDTH],
            ["select-layout", "-t", window_id, "main-vertical"]]
