"""Attention: a teammate waiting for the person rings the bell in the lead's
pane, shows a tmux message in the person's client (no tmux format from team data ever runs) and
runs SWARM_NOTIFY_COMMAND with the request as data, in a minimal environment; the wait says
how long is left."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from libtmux.server import Server
from libtmux.session import Session

import tests.system.tmux.test_tmux_cli as test_tmux_cli
from swarm.core.team.team import Team
from tests.support import tmux_terminal
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.cli_runner import SWARM
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.helpers import wait_until
from tests.support.tmux_terminal import Terminal, tmux
from tests.system.lead.test_interactive import screen, shows
from tests.system.tmux.test_tmux_cli import TEAM, ok

tmux_env = test_tmux_cli.tmux_env
team = test_tmux_cli.team
terminal = tmux_terminal.terminal
LEFT = re.compile(r"denied at \d\d:\d\d:\d\d \(in (2m00s|1m[0-5]\ds)\)")


@pytest.mark.parametrize("backend", ["tmux", "hidden"])
def test_a_teammate_asking_rings_the_lead_pane_shows_a_message_and_notifies(
    server: Server, team: Team, tmux_env: dict[str, str], terminal: Terminal,
    tmp_path: Path, backend: str,
) -> None:
    got, pwned = tmp_path / "notified.txt", tmp_path / "pwned"
    script = tmp_path / "notify.sh"
    script.write_text(f"#!/bin/sh\n{{ env; echo ---; cat; }} > {got}.tmp && mv {got}.tmp {got}\n")
    script.chmod(0o755)
    env = {**tmux_env, "SWARM_NOTIFY_COMMAND": str(script), "SWARM_PERMISSION_TIMEOUT": "120",
           "ANTHROPIC_API_KEY": "sk-not-for-hooks"}
    lead = terminal.shell("lead", env)
    tmux(server, "set-option", "-g", "display-time", "60000")  # the message stays to be read
    terminal.shell("watch", env)
    terminal.attach("watch")  # the person looks elsewhere (e.g. at the team's panes)
    lead_window = tmux(server, "display-message", "-p", "-t", lead, "#{window_id}")[0]

    command = f"touch hello.txt '#(touch {pwned})'"
    spawned = terminal.run(lead, f"{SWARM} spawn careful --backend {backend} --model shell"
                                 f" --prompt \"\\$ {command}\"")
    assert any(line.endswith("=0") for line in spawned), spawned

    text = wait_until(lambda: got.read_text() if got.exists() else "", 30,
                      message="SWARM_NOTIFY_COMMAND ran")
    environ, _, stdin = text.partition("---\n")
    request = json.loads(stdin)
    (listed,) = json.loads(ok(env, "permissions", "list", "--json"))
    header, row = ok(env, "permissions", "list").splitlines()[:2]
    assert header.split()[-2:] == ["DENIED", "IN"]
    assert re.fullmatch(r"2m00s|1m[0-5]\ds", row.split()[-1]), row
    assert request["request_id"] == listed["request_id"]
    assert request["team"] == TEAM and request["sender"] == "careful"
    assert request["kind"] == "permission_request" and command in request["text"]
    assert request["answer"] == f"swarm permissions approve {listed['request_id'][:8]}"
    variables = dict(line.split("=", 1) for line in environ.splitlines() if "=" in line)
    assert variables["SWARM_NOTIFY_SENDER"] == "careful"
    assert variables["SWARM_NOTIFY_REQUEST_ID"] == listed["request_id"]
    assert "sk-not-for-hooks" not in environ  # a hook's minimal environment
    assert LEFT.search(variables["SWARM_NOTIFY_MESSAGE"])

    # The bell: rung in the lead's pane (its window is flagged; its session has no client).
    wait_until(lambda: tmux(server, "display-message", "-p", "-t", lead_window,
                            "#{window_bell_flag}") == ["1"], 10, message="the bell")
    # The message, in the status line the person sees: the data shown, never run.
    def message() -> str:
        screen = terminal.outer_screen()
        return screen if "careful@alpha asks:" in screen else ""

    shown = wait_until(message, 10, message="the tmux message")
    assert f"#(touch {pwned})"[:40] in shown
    assert "swarm permissions approve" in shown
    assert not pwned.exists()

    # The teammate's own view says how long is left.
    if backend == "tmux":
        pane = next(p for p, info in test_tmux_cli.panes(server).items()
                    if info["@swarm_agent"] == "careful")
        screen = "\n".join(tmux(server, "capture-pane", "-p", "-J", "-t", pane))
    else:
        screen = ok(env, "logs", "careful")
    assert LEFT.search(screen), screen


def test_the_interactive_lead_rings_once_says_the_time_left_and_prints_the_answer_once(
    fake_api: FakeAnthropic, session: Session, tmp_path: Path, swarm_home: Path
) -> None:
    """Led by `swarm lead`, the lead's terminal rings (not the teammate: nothing twice), its
    question says when it is denied, and `y` prints how the request ended once."""
    def chat(body: dict[str, Any]) -> Scripted:
        if last_user_text(body).endswith("spawn bob"):
            return reply("Spawning.", [("SpawnTeammate", {
                "name": "bob", "prompt": "$ touch made-by-bob.txt", "model": "shell",
                "permission_mode": "default"})])
        return reply("Noted.")

    fake_api.fallback = chat
    got = tmp_path / "notified.jsonl"
    script = tmp_path / "notify.sh"
    script.write_text(f"#!/bin/sh\n{{ cat; echo; }} >> {got}\n")
    script.chmod(0o755)
    env = {"SWARM_HOME": str(swarm_home), "ANTHROPIC_API_KEY": "test-key",
           "ANTHROPIC_BASE_URL": fake_api.base_url, "NO_PROXY": "127.0.0.1", "HOME": str(tmp_path),
           "SWARM_SHUTDOWN_GRACE": "5", "PATH": os.environ["PATH"], "TERM": "xterm-256color",
           "SWARM_NOTIFY_COMMAND": str(script), "SWARM_PERMISSION_TIMEOUT": "120"}
    command = shlex.join([SWARM, "lead", "--model", "sonnet", "--backend", "hidden", "--team",
                          "ring", "--cwd", str(tmp_path)])
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    window = session.new_window(window_name="lead", window_shell=(
        f'env -i {exports} TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" {command}'))
    pane = window.active_pane
    assert pane is not None
    try:
        shows(pane, "swarm lead: team ring", "\n>", timeout=90)
        pane.send_keys("spawn bob", enter=True)
        text = shows(pane, "bob wants to run: Bash: touch made-by-bob.txt", "unless answered",
                     "[y/n/a] >")
        assert LEFT.search(text), text
        wait_until(lambda: session.cmd("display-message", "-p", "-t", window.window_id or "",
                                       "#{window_bell_flag}").stdout == ["1"], 10,
                   message="the bell in the lead's pane")
        notified = wait_until(lambda: got.read_text().split("\n\n")[0] if got.exists() else "",
                              15, message="the notify command")
        assert json.loads(notified)["sender"] == "bob"
        pane.send_keys("y", enter=True)
        wait_until((tmp_path / "made-by-bob.txt").exists, 15, message="bob's file")
        text = shows(pane, "bob: ran 1 command(s): ok")
        assert len([line for line in text.splitlines() if "approved" in line]) == 1, text
        assert len([line for line in got.read_text().splitlines() if line.strip()]) == 1
        pane.send_keys("C-d", enter=False)
        wait_until(lambda: not agent_processes(swarm_home), 40,
                   message=f"the session's end:\n{screen(pane)}")
    finally:
        for stray in agent_processes(swarm_home):
            stop_tree(stray.pid)


@pytest.fixture
def session_params() -> dict[str, Any]:
    return {"x": 200, "y": 50}  # the question and its time left on one line


def test_in_iterm2_the_bell_is_a_notification_and_only_a_terminal_of_ours_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swarm.core.team.attention import ITERM_VAR, TTY_VAR, Alert, ring

    master, slave = os.openpty()
    alert = Alert(team="alpha", sender="careful", kind="permission_request", request_id="r1",
                  text="Bash: echo \x1b]52;c;AAAA\x07 #(x)", answer="swarm permissions approve r1")
    monkeypatch.delenv("SWARM_NOTIFY_COMMAND", raising=False)
    try:
        ring(alert, {TTY_VAR: os.ttyname(slave), ITERM_VAR: "1"})
        written = os.read(master, 4096).decode()
    finally:
        os.close(master)
        os.close(slave)
    assert written.startswith("\x1b]9;swarm: careful@alpha asks: Bash: echo ") and written.endswith(
        "\a")
    body = written[len("\x1b]9;"):-1]
    assert "\x1b" not in body and "\x07" not in body  # the data's own escapes made visible
    assert "\\x1b]52;c;AAAA\\x07" in body and "it waits" in body

    # Not a terminal (a file named by a stray variable): never written to.
    target = tmp_path / "not-a-tty"
    target.write_text("")
    ring(alert, {TTY_VAR: str(target)})
    assert target.read_text() == ""
