"""On a real terminal: a teammate's pane streams a running command's output
(escaped, bounded) under a status line with its elapsed time, shows "thinking Ns" during a model
call, `swarm status --watch` says what each member is doing and fits a 60-column pane, and the
interactive lead's prompt shows how long its model call has run. A private tmux server (libtmux's
`server`/`session` fixtures), read with capture-pane."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from libtmux.server import Server
from libtmux.session import Session

from swarm.core.store import paths
from swarm.core.team.state import read_state
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.helpers import wait_until

TEAM = "live"
SHELL = ("--model", "shell", "--permission-mode", "bypassPermissions")


@pytest.fixture
def session_params() -> dict[str, Any]:
    return {"x": 120, "y": 40}


@pytest.fixture
def env(server: Server, swarm_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    monkeypatch.setenv("SWARM_TMUX_SOCKET", str(server.socket_name))
    yield {**os.environ, "SWARM_TMUX_SOCKET": str(server.socket_name), "SWARM_TEAM": TEAM}
    for proc in agent_processes(swarm_home):
        stop_tree(proc.pid)


def ok(env: dict[str, str], *args: str) -> str:
    proc = run_swarm(*args, env=env, timeout=60)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def capture(server: Server, pane: str, history: bool = True) -> str:
    scroll = ["-J", "-S", "-"] if history else []
    result = server.cmd("capture-pane", "-p", *scroll, "-t", pane)
    return "\n".join(result.stdout)


def showing(server: Server, pane: str, test: Callable[[str], object]) -> str:
    """The pane's text, once `test` holds for it ("" until then)."""
    text = capture(server, pane)
    return text if test(text) else ""


def spawn_in_pane(env: dict[str, str], name: str, prompt: str, *model: str) -> str:
    out = ok(env, "spawn", name, "--backend", "tmux", *(model or SHELL), "--json",
             "--prompt", prompt)
    return str(json.loads(out)["pane_id"])


ELAPSED = re.compile(r"running Bash .*\b(\d+)s\b")


def test_a_running_command_streams_its_output_with_its_elapsed_time(
    server: Server, env: dict[str, str], tmp_path: Path
) -> None:
    ok(env, "team", "create", TEAM)
    flag = tmp_path / "flag"
    pane = spawn_in_pane(env, "w1", f"$ echo stream-start; seq 701 703; while [ ! -e {flag} ];"
                                    f" do sleep 0.1; done; echo stream-end")
    # Still running (it waits for the flag): its output so far is on screen, and the time.
    text = wait_until(lambda: showing(server, pane, lambda t: "| 703" in t and ELAPSED.search(t)),
                      20, message=f"streamed output:\n{capture(server, pane)}")
    assert "| stream-start" in text and "| 701" in text and "| stream-end" not in text
    first = int(ELAPSED.findall(capture(server, pane, history=False))[-1])
    wait_until(lambda: any(int(s) > first for s in ELAPSED.findall(
        capture(server, pane, history=False))), 10, message="the elapsed time going on")
    state = read_state(TEAM, "w1")
    assert state is not None and state.activity is not None and state.activity.startswith("Bash")
    flag.touch()
    wait_until(lambda: "idle (available)" in capture(server, pane), 20,
               message=f"w1 idle:\n{capture(server, pane)}")
    screen = capture(server, pane, history=False)
    assert "running Bash" not in screen  # the status line is gone with the command
    assert "| stream-end" in capture(server, pane)
    state = read_state(TEAM, "w1")
    assert state is not None and state.activity is None


def test_a_flood_of_output_is_escaped_and_bounded(
    server: Server, env: dict[str, str], tmp_path: Path
) -> None:
    ok(env, "team", "create", TEAM)
    flag = tmp_path / "flag"
    command = (r"printf 'esc \033]0;pwned\007 here\n'; seq 1 200000;"
               r" head -c 100000 /dev/zero | tr '\0' x; echo; echo after-flood;"
               f" while [ ! -e {flag} ]; do sleep 0.1; done")
    pane = spawn_in_pane(env, "w1", f"$ {command}")
    text = wait_until(lambda: showing(server, pane, lambda t: "more output" in t), 30,
                      message=f"the bound:\n{capture(server, pane)}")
    assert "| esc \\x1b]0;pwned\\x07 here" in text  # escaped, so the title stays
    title = server.cmd("display-message", "-p", "-t", pane, "#{pane_title}").stdout[0]
    assert "pwned" not in title
    streamed = [ln for ln in text.splitlines() if re.fullmatch(r"\s+\| \d+", ln)]
    assert 10 <= len(streamed) <= 200  # bounded: never 200000 lines
    assert "| 200000" not in text
    wait_until(lambda: ELAPSED.search(capture(server, pane, history=False)), 10,
               message="the status line under the bounded output")
    flag.touch()
    wait_until(lambda: "idle (available)" in capture(server, pane), 30,
               message=f"w1 idle:\n{capture(server, pane)}")
    assert max(len(ln) for ln in capture(server, pane).splitlines()) < 2000


class Slow:
    """A model call that hangs until released (the teammate's, or the lead's)."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.release = threading.Event()
        self.hanging = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Scripted:
        if self.word in last_user_text(body) and not self.hanging.is_set():
            self.hanging.set()
            self.release.wait(60)
            return reply("Finally.")
        return reply("Noted.")


THINKING = re.compile(r"thinking\s+(\d+)s")


def test_thinking_in_the_pane_and_in_status_watch_at_60_columns(
    server: Server, env: dict[str, str], fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    slow = Slow("think long")
    fake_api.fallback = slow
    env = {**env, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.base_url,
           "NO_PROXY": "127.0.0.1"}
    ok(env, "team", "create", TEAM)
    ok(env, "spawn", "bob", "--backend", "hidden", *SHELL)
    wait_until(lambda: (s := read_state(TEAM, "bob")) and s.state == "idle", 30,
               message="bob idle")
    pane = spawn_in_pane(env, "alice", "please think long", "--model", "sonnet")
    try:
        wait_until(slow.hanging.is_set, 60, message="alice's model call")
        wait_until(lambda: THINKING.search(capture(server, pane, history=False)), 15,
                   message=f"thinking in the pane:\n{capture(server, pane)}")
        env_args = [a for k in ("SWARM_HOME", "SWARM_TEAM", "PATH")
                    for a in ("-e", f"{k}={env[k]}")]
        watch = server.cmd("new-session", "-d", "-s", "watcher", "-x", "60", "-y", "20",
                           *env_args, "-P", "-F", "#{pane_id}", "/bin/bash", "-c",
                           f"{shlex.quote(SWARM)} status --watch; sleep 30").stdout[0]

        def watched() -> str:
            text = capture(server, watch, history=False)
            return text if re.search(r"alice\s+working\s+thinking\s+\d+s", text) and re.search(
                r"bob\s+idle\s+idle\s+\d+", text) else ""

        text = wait_until(watched, 30, message=f"status --watch:\n{capture(server, watch)}")
        assert "ACTIVITY" in text and "wor…" not in text and "$0.…" not in text
        assert max(len(line) for line in text.splitlines()) <= 60
        first = int(THINKING.findall(text)[0])
        wait_until(lambda: any(int(s) > first for s in THINKING.findall(
            capture(server, watch, history=False))), 10, message="the watch's clock going on")
    finally:
        slow.release.set()
    wait_until(lambda: "Finally." in capture(server, pane), 30, message="alice's reply")


def test_the_interactive_leads_prompt_shows_how_long_its_model_call_runs(
    fake_api: FakeAnthropic, session: Session, tmp_path: Path, swarm_home: Path
) -> None:
    slow = Slow("wait for me")
    fake_api.fallback = slow
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in {
        "SWARM_HOME": str(swarm_home), "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.base_url, "NO_PROXY": "127.0.0.1", "HOME": str(tmp_path),
        "SWARM_SHUTDOWN_GRACE": "5", "PATH": os.environ["PATH"], "TERM": "xterm-256color"}.items())
    lead = shlex.join([SWARM, "lead", "--model", "sonnet", "--teammate-model", "shell",
                       "--backend", "hidden", "--team", "thinker", "--cwd", str(tmp_path)])
    window = session.new_window(window_name="lead", window_shell=f"env -i {exports} {lead}")
    pane = window.active_pane
    assert pane is not None

    def screen() -> str:
        return "\n".join(pane.cmd("capture-pane", "-p").stdout)

    wait_until(lambda: "\n>" in screen(), 90, message=f"the prompt:\n{screen()}")
    assert not THINKING.search(screen())  # no model call yet: a bare prompt
    pane.send_keys("wait for me", enter=True)
    try:
        wait_until(slow.hanging.is_set, 30, message="the lead's model call")
        seen = wait_until(lambda: THINKING.findall(screen()), 15,
                          message=f"thinking in the prompt:\n{screen()}")
        wait_until(lambda: any(int(s) > int(seen[-1]) for s in THINKING.findall(screen())), 10,
                   message="the prompt's clock going on")
    finally:
        slow.release.set()
    wait_until(lambda: "lead: Finally." in screen() and not THINKING.search(screen()), 30,
               message=f"the reply, and the prompt bare again:\n{screen()}")
    pane.send_keys("C-d", enter=False)
    wait_until(lambda: not agent_processes(swarm_home), 40, message="the session's end")


def test_a_hidden_teammates_log_gets_no_status_line_nor_streamed_output(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Not a terminal (a hidden teammate's stdout is its agent.log): the log keeps the lines it
    always had, the result under its call, and nothing rewritten or streamed."""
    ok(env, "team", "create", TEAM)
    ok(env, "spawn", "w1", "--backend", "hidden", *SHELL, "--prompt",
       "$ echo log-start; sleep 2.5; echo log-end")
    wait_until(lambda: (s := read_state(TEAM, "w1")) and s.state == "idle" and s.turns, 30,
               message="w1 idle")
    log = paths.agent_log(TEAM, "w1").read_text()
    assert "| log-start" in log and "| log-end" in log  # the result, as before
    assert sum("| log-start" in line for line in log.splitlines()) == 1  # nothing streamed
    assert "\x1b[K" not in log and "running Bash" not in log and "thinking" not in log


def test_a_headless_lead_says_its_long_model_call_is_still_running(
    fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path
) -> None:
    """CI: no terminal to redraw, so a line on stderr when the lead's model call has run
    SWARM_PROGRESS_EVERY seconds, and again each as long after; none for a quick one."""
    slow = Slow("think hard")
    fake_api.fallback = slow
    log = tmp_path / "stderr.txt"
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "HOME": str(tmp_path),
           "SWARM_PROGRESS_EVERY": "1", "SWARM_SHUTDOWN_GRACE": "5"}
    with log.open("w") as err:
        proc = subprocess.Popen([SWARM, "lead", "--headless", "--model", "sonnet",
                                 "--teammate-model", "shell", "--backend", "hidden",
                                 "--team", "ci", "please think hard"], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            wait_until(slow.hanging.is_set, 60, message="the lead's model call")
            wait_until(lambda: re.search(r"lead: still thinking \(2s\)", log.read_text()), 15,
                       message=f"progress lines:\n{log.read_text()}")
        finally:
            slow.release.set()
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, log.read_text()
    assert out.strip() == "Finally."
    lines = log.read_text().splitlines()
    assert any(re.fullmatch(r"\d\d:\d\d:\d\d lead: still thinking \(1s\)", ln) for ln in lines)
    assert sum("still thinking" in ln for ln in lines) >= 2


# -- what a hurried user meets in a pane: a finished command's one line, how long it idles ----
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

