"""The MCP manager against real servers built with the `mcp` package: stdio (under the guard)
and streamable HTTP; failures to start, errors, a server dying mid-call, timeouts, and no
server process left after the manager, or the process holding it, is gone (SIGKILL too)."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from swarm.core.trust.mcp_config import McpServer, McpServerSpec
from swarm.runtime.extensions import mcp_guard
from swarm.runtime.extensions.mcp_client import McpManager
from tests.support.helpers import process_gone, wait_until
from tests.support.mcp_fixtures import SERVER_SOURCE, calc_server, pids, write_server


def test_a_stdio_server_tools_calls_errors_and_a_failed_neighbour(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    warnings: list[str] = []
    servers = {"calc": calc_server(tmp_path, pidfile),
               "ghost": McpServer(name="ghost", spec=McpServerSpec(command="no-such-server-xyz"),
                                  source="test")}
    manager = McpManager(servers, cwd=tmp_path, warn=warnings.append, log_dir=tmp_path / "logs")
    try:
        manager.start(timeout=60)
        assert len(warnings) == 1 and "'ghost'" in warnings[0] and "command not found" in warnings[0]
        tools = {t.qualified: t for t in manager.tools()}
        assert set(tools) == {"mcp__calc__add", "mcp__calc__fail", "mcp__calc__die",
                              "mcp__calc__nap"}
        add = tools["mcp__calc__add"]
        assert add.description == "Add two integers."
        assert add.input_schema["type"] == "object"
        assert set(add.input_schema["properties"]) == {"a", "b"}
        assert add.input_schema["required"] == ["a", "b"]

        result = manager.call_tool("mcp__calc__add", {"a": 2, "b": 3}, timeout=30)
        assert (result.text, result.is_error) == ("5", False)
        failed = manager.call_tool("mcp__calc__fail", {"why": "boom"}, timeout=30)
        assert failed.is_error
        bad_input = manager.call_tool("mcp__calc__add", {"a": "x"}, timeout=30)
        assert bad_input.is_error and "a" in bad_input.text
        assert manager.call_tool("mcp__nope__x", {}, timeout=5).is_error
        [status] = [s for s in manager.status() if s["name"] == "ghost"]
        assert status["state"] == "failed"
        [server_pid] = pids(pidfile)
        assert psutil.pid_exists(server_pid)
    finally:
        manager.close()
    wait_until(lambda: process_gone(server_pid), 10, message="the server to exit with its manager")


def test_a_server_that_dies_mid_call_is_a_tool_error_and_the_manager_goes_on(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    with McpManager({"calc": calc_server(tmp_path, pidfile)}, cwd=tmp_path) as manager:
        manager.start(timeout=60)
        died = manager.call_tool("mcp__calc__die", {}, timeout=30)
        assert died.is_error and "calc" in died.text
        after = manager.call_tool("mcp__calc__add", {"a": 1, "b": 1}, timeout=5)
        assert after.is_error
    assert all(process_gone(p) for p in pids(pidfile))


def test_a_slow_call_times_out_and_an_abort_ends_a_call_at_once(tmp_path: Path) -> None:
    with McpManager({"calc": calc_server(tmp_path)}, cwd=tmp_path) as manager:
        manager.start(timeout=60)
        start = time.monotonic()
        slow = manager.call_tool("mcp__calc__nap", {"seconds": 60}, timeout=1)
        assert slow.is_error and "timed out after 1s" in slow.text
        # At its timeout, not after the extra grace the poll loop allows a late answer (+5 s).
        assert time.monotonic() - start < 5
        abort = threading.Event()
        threading.Timer(0.5, abort.set).start()
        aborted = manager.call_tool("mcp__calc__nap", {"seconds": 60}, timeout=120, abort=abort)
        assert aborted.is_error and aborted.text == "interrupted"
        assert time.monotonic() - start < 20
        assert manager.call_tool("mcp__calc__add", {"a": 2, "b": 3}, timeout=30).text == "5"


def test_a_server_that_never_answers_fails_the_start_at_its_timeout(tmp_path: Path) -> None:
    warnings: list[str] = []
    pidfile = tmp_path / "pid"
    spec = McpServerSpec(command=sys.executable, args=["-c", (
        f"import os, time; open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}}\\n'); "
        "time.sleep(300)")])
    with McpManager({"mute": McpServer(name="mute", spec=spec, source="t")}, cwd=tmp_path,
                    warn=warnings.append) as manager:
        start = time.monotonic()
        manager.start(timeout=1)
        assert time.monotonic() - start < 10
        assert manager.tools() == []
    assert len(warnings) == 1 and "did not start within 1s" in warnings[0]
    for pid in pids(pidfile):
        wait_until(lambda p=pid: process_gone(p), 15, message="the mute server to be stopped")


def test_closing_while_a_server_is_still_starting_stops_it(tmp_path: Path) -> None:
    """SIGTERM can reach the agent while `start()` waits: `close()` must still end the server."""
    pidfile = tmp_path / "pid"
    spec = McpServerSpec(command=sys.executable, args=["-c", (
        f"import os, time; open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}}\\n'); "
        "time.sleep(300)")])
    manager = McpManager({"mute": McpServer(name="mute", spec=spec, source="t")}, cwd=tmp_path)
    starter = threading.Thread(target=manager.start, args=(120,), daemon=True)
    starter.start()
    wait_until(lambda: pids(pidfile), 30, message="the server to start")
    manager.close()
    [pid] = pids(pidfile)
    wait_until(lambda: process_gone(pid), 15, message="the starting server to be stopped")


def test_a_server_that_exits_at_once_reports_its_stderr(tmp_path: Path) -> None:
    warnings: list[str] = []
    spec = McpServerSpec(command=sys.executable,
                         args=["-c", "import sys; sys.exit('no config file for this server')"])
    with McpManager({"broken": McpServer(name="broken", spec=spec, source="t")}, cwd=tmp_path,
                    warn=warnings.append, log_dir=tmp_path) as manager:
        manager.start(timeout=30)
    assert len(warnings) == 1 and "no config file for this server" in warnings[0]


def test_a_servers_log_is_private_like_every_swarm_file(tmp_path: Path) -> None:
    """The log (a server's stderr: it may print tokens or paths) is 0600 in a 0700 directory,
    whatever the umask; an existing loose one is tightened when it is opened again."""
    logs = tmp_path / "agent" / "logs"
    spec = McpServerSpec(command=sys.executable, args=["-c", "import sys; sys.exit('bye')"])
    servers = {"noisy": McpServer(name="noisy", spec=spec, source="t")}
    old = os.umask(0o022)
    try:
        with McpManager(servers, cwd=tmp_path, log_dir=logs) as manager:
            manager.start(timeout=30)
        log = logs / "mcp-noisy.log"
        assert "bye" in log.read_text()
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        assert stat.S_IMODE(logs.stat().st_mode) == 0o700
        assert stat.S_IMODE(logs.parent.stat().st_mode) == 0o700
        log.chmod(0o644)
        with McpManager(servers, cwd=tmp_path, log_dir=logs) as manager:
            manager.start(timeout=30)
        assert stat.S_IMODE(log.stat().st_mode) == 0o600 and log.read_text().count("bye") == 2
    finally:
        os.umask(old)


HOLDER = """
import sys, time
from pathlib import Path
from swarm.core.trust.mcp_config import McpServer, McpServerSpec
from swarm.runtime.extensions.mcp_client import McpManager
spec = McpServerSpec(command=sys.executable, args=[sys.argv[1]], env={"PIDFILE": sys.argv[2]})
manager = McpManager({"calc": McpServer(name="calc", spec=spec, source="t")}, cwd=Path.cwd())
manager.start(60)
print(manager.call_tool("mcp__calc__add", {"a": 2, "b": 3}, 30).text, flush=True)
time.sleep(300)
"""


def test_the_server_dies_with_a_sigkilled_owner(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    script = write_server(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(script), str(pidfile)],
                              stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "5"
        [server_pid] = pids(pidfile)
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        wait_until(lambda: process_gone(server_pid), 10, message="the server to die with its owner")
    finally:
        holder.kill()


def test_the_guard_takes_the_servers_whole_group_down_when_its_parent_dies(tmp_path: Path) -> None:
    """Even a server that ignores SIGTERM and leaves a child behind."""
    record = tmp_path / "pids"
    server = (f"trap '' TERM; sleep 300 & echo $! >> {record}; echo $$ >> {record}; "
              "while true; do sleep 1; done")
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time, os;"
        f"subprocess.Popen([sys.executable, '-I', {str(Path(mcp_guard.__file__))!r}, "
        f"str(os.getpid()), '--', 'bash', '-c', {server!r}]);"
        "time.sleep(300)")])
    try:
        wait_until(lambda: len(pids(record)) == 2, 10, message="the server and its child")
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        for pid in pids(record):
            wait_until(lambda p=pid: process_gone(p), 10, message=f"{pid} to die with the guard")
    finally:
        parent.kill()
        for pid in pids(record):
            if not process_gone(pid):
                psutil.Process(pid).kill()


def test_a_stop_while_the_server_starts_still_ends_its_group(tmp_path: Path) -> None:
    """The agent dies (the guard's SIGTERM) just as the server has started, before the guard
    lets go of its own pipes: a CI flake left the server and its child running for good."""
    record = tmp_path / "pids"
    server = (f"trap '' TERM; sleep 300 & echo $! >> {record}; echo $$ >> {record}; "
              "while true; do sleep 1; done")
    driver = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(Path(mcp_guard.__file__).parent)!r})\n"
        "import mcp_guard\n"
        "real_open = os.open\n"
        "def open_then_stop(path, *args):\n"
        "    if path == os.devnull:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return real_open(path, *args)\n"
        "os.open = open_then_stop\n"
        f"sys.exit(mcp_guard.main([str(os.getppid()), '--', 'bash', '-c', {server!r}]))\n")
    errors = tmp_path / "stderr"
    with errors.open("w") as err:  # not a pipe: a server left behind would hold it open
        proc = subprocess.run([sys.executable, "-I", "-c", driver], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=err, timeout=30)

    def left() -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter(["cmdline"]):
            if str(record) in " ".join(p.info["cmdline"] or []) and not process_gone(p.pid):
                found.append(p)
        return found + [psutil.Process(pid) for pid in pids(record) if not process_gone(pid)]

    try:
        assert proc.returncode == 1 and "Traceback" not in errors.read_text(), errors.read_text()
        wait_until(lambda: not left(), 10, message="the server's group to be gone")
    finally:
        for rest in left():
            rest.kill()


def test_the_guard_refuses_bad_usage_and_reports_a_missing_command(tmp_path: Path) -> None:
    guard = str(Path(mcp_guard.__file__))
    usage = subprocess.run([sys.executable, "-I", guard, "x"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage" in usage.stderr
    missing = subprocess.run([sys.executable, "-I", guard, str(os.getpid()), "--", "no-such-xyz"],
                             capture_output=True, text=True, timeout=30)
    assert missing.returncode == 127 and "not found: no-such-xyz" in missing.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_streamable_http_server(tmp_path: Path) -> None:
    port = free_port()
    source = SERVER_SOURCE.replace(
        'app = FastMCP("calc")', f'app = FastMCP("calc")\nPORT = {port}').replace(
        'app.run("stdio")',
        'try:\n'
        '    app.run("streamable-http", host="127.0.0.1", port=PORT)\n'
        'except TypeError:  # SDK 1.x: host and port are settings\n'
        '    app.settings.host, app.settings.port = "127.0.0.1", PORT\n'
        '    app.run("streamable-http")\n')
    script = tmp_path / "http_server.py"
    script.write_text(source)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        def listening() -> bool:
            with socket.socket() as sock:
                return sock.connect_ex(("127.0.0.1", port)) == 0

        wait_until(listening, 30, message="the HTTP MCP server to listen")
        spec = McpServerSpec(url=f"http://127.0.0.1:{port}/mcp")
        warnings: list[str] = []
        with McpManager({"web": McpServer(name="web", spec=spec, source="t")}, cwd=tmp_path,
                        warn=warnings.append) as manager:
            manager.start(timeout=30)
            assert warnings == []
            assert "mcp__web__add" in {t.qualified for t in manager.tools()}
            assert manager.call_tool("mcp__web__add", {"a": 2, "b": 3}, timeout=30).text == "5"
    finally:
        proc.kill()
        proc.wait(10)
