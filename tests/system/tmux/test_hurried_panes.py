"""Small things a hurried user meets in a teammate's pane: a command whose
output streamed into the pane is shown once, then one line (`12 lines, exit 0`), while its log
keeps the result; an idle teammate's pane says `idle 12s` under its output, as `status --watch`
does. A private tmux server (libtmux's `server`/`session` fixtures), read with capture-pane."""

from __future__ import annotations

import re

import pytest
from libtmux.server import Server

import tests.system.tmux.test_live_panes as test_live_panes
from swarm.core.store import paths
from tests.support.helpers import wait_until
from tests.system.tmux.test_live_panes import TEAM, capture, ok, showing, spawn_in_pane

env = test_live_panes.env
session_params = test_live_panes.session_params
IDLE = re.compile(r"^\s+idle (\d+)s\s*$", re.M)


@pytest.mark.parametrize(("command", "summary"), [
    ("seq 701 712; sleep 2", "12 lines, exit 0"),
    ("seq 701 703; sleep 2; exit 3", "3 lines, exit 3"),
])
def test_streamed_output_is_shown_once_then_one_line(
        server: Server, env: dict[str, str], command: str, summary: str) -> None:
    ok(env, "team", "create", TEAM)
    pane = spawn_in_pane(env, "w1", f"$ {command}")
    text = wait_until(lambda: showing(server, pane, lambda t: "idle (" in t), 30,
                      message=f"w1 idle:\n{capture(server, pane)}")
    assert text.count("| 701") == 1 and text.count("| 703") == 1, text  # once, as it came
    assert re.search(rf"^\d\d:\d\d:\d\d\s+{summary}\s*$", text, re.M), text
    # The log had no stream: it keeps the result itself.
    log = paths.agent_log(TEAM, "w1").read_text()
    assert re.search(r"[|!] 701", log) and summary not in log, log


def test_an_idle_pane_says_for_how_long(server: Server, env: dict[str, str]) -> None:
    ok(env, "team", "create", TEAM)
    pane = spawn_in_pane(env, "w1", "$ echo hello")
    wait_until(lambda: "idle (available)" in capture(server, pane), 30,
               message=f"w1 idle:\n{capture(server, pane)}")
    first = wait_until(lambda: IDLE.findall(capture(server, pane, history=False)), 10,
                       message=f"the idle line:\n{capture(server, pane, history=False)}")
    wait_until(lambda: any(int(s) > int(first[-1]) for s in
                           IDLE.findall(capture(server, pane, history=False))), 10,
               message="the idle time going on")
    # Work again: the idle line goes.
    ok(env, "send", "w1", "$ sleep 3")
    wait_until(lambda: "running Bash" in capture(server, pane, history=False), 15,
               message=f"w1 busy:\n{capture(server, pane, history=False)}")
    assert not IDLE.search(capture(server, pane, history=False))
