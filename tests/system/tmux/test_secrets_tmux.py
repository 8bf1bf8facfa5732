"""Secrets by value on a real tmux server (libtmux's private-socket `server` fixture): after
`swarm spawn --backend tmux` no secret is in the server's global environment, and no process
command line holds one (the tmux client calls are recorded by a `tmux` wrapper that execs the
real tmux, and /proc/*/cmdline is read during and after the spawn). The teammate still gets
every variable, through the pane's private file, and its Bash sees none of them."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import psutil
import pytest
from libtmux.server import Server

from swarm.core.team.team import Team
from tests.support.agent_fixtures import stop_tree
from tests.support.cli_runner import SWARM
from tests.support.helpers import started_with, wait_until
from tests.support.redis_server import RedisServer
from tests.system.teammate.test_secrets_by_value import PLAIN, SECRETS, STORE_PASSWORD, leaks

TEAM = "alpha"


def all_cmdlines() -> str:
    lines = []
    for proc in psutil.process_iter(["cmdline"]):
        lines.append(" ".join(proc.info["cmdline"] or []))
    return "\n".join(lines)


def test_a_tmux_spawn_puts_no_secret_on_a_command_line_or_in_the_servers_environment(
        server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    redis = RedisServer(tmp_path / "redis", password=STORE_PASSWORD)
    redis.start()
    store = f"redis://:{STORE_PASSWORD}@127.0.0.1:{redis.port}/0"
    # The real tmux behind a wrapper that records every argv it is given.
    real = shutil.which("tmux")
    assert real
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "tmux-calls"
    wrapper = bindir / "tmux"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SWARM_STORE", store)
    monkeypatch.setenv("SWARM_TMUX_SOCKET", str(server.socket_name))
    Team.create(TEAM)
    out = tmp_path / "bash-env"
    env = {**os.environ, **SECRETS, **PLAIN, "SWARM_TEAM": TEAM,
           "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    hidden = [*SECRETS.values(), STORE_PASSWORD]
    seen: list[str] = []
    done = threading.Event()

    def watch() -> None:  # every command line while the spawn runs
        while not done.wait(0.005):  # sampling, not synchronisation
            seen.append(all_cmdlines())

    watcher = threading.Thread(target=watch, daemon=True)
    assert not server.is_alive()  # `swarm spawn` starts the server, with all of `env`
    watcher.start()
    pid = None
    try:
        proc = subprocess.run(
            [SWARM, "spawn", "w1", "--backend", "tmux", "--model", "shell", "--permission-mode",
             "bypassPermissions", "--json", "--prompt", f"$ env > {out}"],
            capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        pid = json.loads(proc.stdout)["pid"]
        wait_until(out.exists, 30, message="the teammate's Bash wrote its environment")
        wait_until(lambda: "SWARM_AGENT_ID" in out.read_text(), 10)
        done.set()
        watcher.join(10)
        seen.append(all_cmdlines())
        assert calls.read_text().count("respawn-pane") == 1  # the wrapper did see the spawn
        assert leaks(calls.read_text(), hidden) == []
        assert leaks("\n".join(seen), hidden) == []
        shown = "\n".join(server.cmd("show-environment", "-g").stdout)
        assert leaks(shown, hidden) == []
        assert leaks(out.read_text(), hidden) == []  # the teammate's Bash
        # ...yet the teammate was started with them all (then zeroed them where its commands
        # could read them: /proc/PID/environ shows each as long as it was, all NULs).
        for name, value in (("SWARM_STORE", store), *((n, SECRETS[n]) for n in (
                "OPENAI_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"))):
            assert started_with(pid, name) == b"\0" * len(value.encode()), name
        assert started_with(pid, "SWARM_PLAIN_URL") == PLAIN["SWARM_PLAIN_URL"].encode()
    finally:
        done.set()
        if pid:
            stop_tree(pid)
        redis.stop()
