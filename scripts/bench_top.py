#!/usr/bin/env python3
"""`swarm top` benchmark: first paint with 16 members, a request written -> shown on screen
(p50/p99), the app's memory, and the start-up of `swarm status` and `swarm send` before and
after this change, in the same run.

A temporary SWARM_HOME holds team `bench`: 16 live `shell` teammates (hidden backend, default
mode, so a Bash command asks the person). `swarm top` runs in a tmux pane of 80x24 (the smallest it
is made for), read back with `capture-pane` every 5 ms.

- First paint: from the start of `swarm top` to the first screen that shows the header's
  "waiting for you" (drawn only once the first view of the team is read), `--runs` times;
  beside the wall time, the CPU the process had used by then (/proc/PID/stat), and the load.
- Memory: VmRSS and VmHWM (/proc/PID/status) after the first paint, and again after the
  requests below.
- Request shown: `--requests` times, a message `$ echo k > fkN.txt` to the next teammate;
  it runs the Bash tool, which asks; written = the request message's own timestamp (ms, UTC,
  set by the teammate as it sends it), shown = when the screen first shows the approval bar's
  `asks: Bash: echo k > fkN.txt`;
  then `y` and wait until the file exists.
- Start-up: `python -m swarm status` and `python -m swarm send ...` with the base branch's
  source (`--before REV`, default fix/structure, from `git archive`) and this checkout's,
  interleaved, `--startup-runs` each: median wall and CPU.

Goals: first paint <= 1.0 s on 2 cores, request shown p50 <= 200 ms, RSS <= 80 MB,
other commands' start-up unchanged.

Run: .venv/bin/python scripts/bench_top.py [--runs 5] [--requests 20] [--startup-runs 15]
(2-5 minutes)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)
SWARM = PYTHON.with_name("swarm")
MEMBERS = 16
POLL = 0.005  # seconds between two reads of the screen


def env(home: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items()
           if not k.startswith(("SWARM_", "TEXTUAL")) and k not in ("TMUX", "COLUMNS", "LINES")}
    return {**out, "SWARM_HOME": str(home), "SWARM_TEAM": "bench", "TERM": "xterm-256color"}


def swarm(home: Path, *args: str) -> str:
    proc = subprocess.run([str(SWARM), *args], capture_output=True, text=True, env=env(home),
                          timeout=120, cwd=home)
    if proc.returncode != 0:
        raise SystemExit(f"swarm {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def state(home: Path, name: str) -> dict[str, object]:
    try:
        return dict(json.loads((home / "teams/bench/agents" / name / "state.json").read_text()))
    except (OSError, ValueError):
        return {}


def wait(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.005)


class Screen:
    """`swarm top` in a tmux pane of 80x24 (tmux is the terminal: what it shows is what a person
    sees; Textual rewrites only the cells that change, so its byte stream alone does not say),
    read with `capture-pane` every POLL seconds: a time shown is late by up to a poll and one
    capture."""

    def __init__(self, home: Path, socket: str) -> None:
        self.socket = socket
        variables = [f"{k}={v}" for k, v in env(home).items()
                     if k in ("SWARM_HOME", "SWARM_TEAM", "PATH", "HOME", "LANG", "LC_ALL")]
        self.started = time.time()
        self.tmux("new-session", "-d", "-s", "top", "-x", "80", "-y", "24", "-c", str(home),
                  "env", "TERM=xterm-256color", *variables, str(SWARM), "top", "--team", "bench")
        self.tmux("set", "-g", "status", "off")
        self.pid = int(self.tmux("display-message", "-p", "-t", "top", "#{pane_pid}").strip())

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def first(self, needle: str, timeout: float = 60) -> float:
        """When the screen first showed `needle` (on one row)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.tmux("capture-pane", "-p", "-t", "top")
            if needle in shown:
                return time.time()
            time.sleep(POLL)
        raise SystemExit(f"{needle!r} never shown; the screen:\n{shown}")

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory_mb(self) -> tuple[float, float]:
        status = Path(f"/proc/{self.pid}/status").read_text()
        kb = {k: int(v.split()[0]) for k, v in (ln.split(":", 1) for ln in status.splitlines())
              if k in ("VmRSS", "VmHWM")}
        return kb["VmRSS"] / 1024, kb["VmHWM"] / 1024

    def press(self, key: str) -> None:
        self.tmux("send-keys", "-t", "top", key)

    def close(self) -> None:
        self.press("q")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{self.pid}").exists():
            time.sleep(0.01)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=30)


def first_paints(home: Path, runs: int) -> tuple[list[float], list[float], Screen]:
    walls: list[float] = []
    cpus: list[float] = []
    for run in range(runs + 1):
        screen = Screen(home, f"bench-top-{os.getpid()}-{run}")
        when = screen.first("waiting for you")
        wall = when - screen.started
        cpu = screen.cpu_s()
        if run == runs:
            return walls, cpus, screen  # the last one stays up for the requests
        screen.close()
        if run:  # the first run warms the page cache (byte-compiles nothing: compileall below)
            walls.append(wall)
            cpus.append(cpu)
    raise AssertionError


def request_latency(home: Path, screen: Screen, count: int) -> list[float]:
    sys.path.insert(0, str(ROOT))
    os.environ.update({"SWARM_HOME": str(home)})
    from swarm.core.records.names import LEAD_NAME
    from swarm.core.records.protocol import PermissionRequest
    from swarm.core.team.team import Team

    team = Team("bench")
    out = []
    for n in range(count):
        name = f"w{n % MEMBERS:02d}"
        target = home / f"fk{n}.txt"
        team.send(name, f"$ echo k > fk{n}.txt", sender=LEAD_NAME, summary="bench")
        # The approval bar's words (the log in the Output tab shows the command earlier).
        shown = screen.first(f"asks: Bash: echo k > fk{n}.txt")
        asked = [m for m in team.inbox(LEAD_NAME, checked=False).messages(include_archive=True)
                 if isinstance(s := m.structured(), PermissionRequest)
                 and s.input.get("command") == f"echo k > fk{n}.txt"]
        written = datetime.fromisoformat(asked[0].timestamp.replace("Z", "+00:00")).timestamp()
        out.append((shown - written) * 1000)
        screen.press("y")
        wait(target.exists, 30, f"{target.name} after y")
        wait(lambda name=name: state(home, name).get("state") == "idle", 30, f"{name} idle")
    return out


def startup(home: Path, before: Path, runs: int) -> dict[str, dict[str, list[float]]]:
    """Interleaved `python -m swarm status|send` with the old source and with this one."""
    commands = {"swarm status": ["status"],
                "swarm send": ["send", "w00", "bench message", "--summary", "bench"]}
    trees = {"before": before, "after": ROOT}
    found: dict[str, dict[str, list[float]]] = {}
    for run in range(runs + 1):
        for label, args in commands.items():
            for which, tree in trees.items():
                start = time.perf_counter()
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([str(PYTHON), "-m", "swarm", *args], check=True, cwd=home,
                               env={**env(home), "PYTHONPATH": str(tree)},
                               stdout=subprocess.DEVNULL)
                wall = (time.perf_counter() - start) * 1000
                now = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime) * 1000
                if run:  # the first round warms up
                    row = found.setdefault(f"{label} {which}", {"wall": [], "cpu": []})
                    row["wall"].append(wall)
                    row["cpu"].append(cpu)
    return found


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="first paints measured")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--startup-runs", type=int, default=15)
    parser.add_argument("--before", default="fix/structure", help="git revision before top")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-top-"))
    home = tmp / "home"
    home.mkdir()
    before = tmp / "before"
    before.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "swarm"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
    for tree in (before, ROOT):
        subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(tree / "swarm")], check=True,
                       stdout=subprocess.DEVNULL)
    try:
        swarm(home, "team", "create", "bench")
        for n in range(MEMBERS):
            swarm(home, "spawn", f"w{n:02d}", "--backend", "hidden", "--model", "shell",
                  "--permission-mode", "default", "--cwd", str(home))
        for n in range(MEMBERS):
            wait(lambda n=n: state(home, f"w{n:02d}").get("state") == "idle", 120, "idle")
        load = os.getloadavg()
        walls, cpus, screen = first_paints(home, args.runs)
        rss, hwm = screen.memory_mb()
        latencies = request_latency(home, screen, args.requests)
        rss2, hwm2 = screen.memory_mb()
        screen.close()
        starts = startup(home, before, args.startup_runs)
        load_end = os.getloadavg()
    finally:
        for n in range(MEMBERS):
            pid = state(home, f"w{n:02d}").get("pid")
            if isinstance(pid, int):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"swarm top, {MEMBERS} members, 80x24 tmux pane; {os.cpu_count()} cores; load "
          f"{load[0]:.1f} at start, {load_end[0]:.1f} at end")
    print(f"first paint ({len(walls)} runs): median {statistics.median(walls):.2f} s, max "
          f"{max(walls):.2f} s wall; CPU by then median {statistics.median(cpus):.2f} s "
          "(goal <= 1.0 s)")
    print(f"memory after first paint: VmRSS {rss:.1f} MB, VmHWM {hwm:.1f} MB; after "
          f"{len(latencies)} requests: VmRSS {rss2:.1f} MB, VmHWM {hwm2:.1f} MB (goal <= 80 MB)")
    print(f"request written -> shown ({len(latencies)}): p50 {pct(latencies, 50):.0f} ms, p99 "
          f"{pct(latencies, 99):.0f} ms, max {max(latencies):.0f} ms (goal p50 <= 200 ms)")
    print(f"start-up, {args.startup_runs} interleaved runs each (median wall / CPU):")
    for label, row in starts.items():
        print(f"  {label:<22} {statistics.median(row['wall']):6.0f} ms / "
              f"{statistics.median(row['cpu']):4.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
