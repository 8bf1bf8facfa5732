#!/usr/bin/env python3
"""`swarm mcp serve` benchmark: a message sent with `swarm send` (the real CLI) to the
lead, returned by a WaitForTeam that was waiting for it.

A real `swarm mcp serve --team bench` subprocess, driven by the official MCP client SDK
(`stdio_client` + `ClientSession`), leads a team with one real `shell` teammate (alice, hidden
backend, idle). Each round: the client calls WaitForTeam {timeout_s: 30}; while it waits, `swarm
send team-lead ... --from alice` runs; the client notes when the result arrives, then ReadInbox
takes the message (so the next wait blocks again). Per round:
- delivered -> returned: from the message's timestamp (written by the sender just before its
  append; millisecond resolution) to the WaitForTeam result in the client: inotify, the wake
  policy's look at the team, the MCP response;
- `swarm send` start -> returned: the same, plus the CLI's own start-up and send.

Run: .venv/bin/python scripts/bench_mcp_serve.py [ROUNDS]   (default 100; about a minute)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(tempfile.mkdtemp(prefix="swarm-bench-mcp-"))
os.environ["SWARM_HOME"] = str(HOME / "swarm-home")
os.environ["SWARM_BACKEND"] = "hidden"
for var in ("SWARM_MODEL", "SWARM_TEAM", "SWARM_AGENT_ID", "SWARM_DEBUG", "ANTHROPIC_API_KEY",
            "TMUX"):
    os.environ.pop(var, None)
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from swarm.core.records.names import LEAD_NAME  # noqa: E402
from swarm.core.team.state import read_state  # noqa: E402
from swarm.core.team.team import Team  # noqa: E402

SWARM = str(Path(sys.executable).with_name("swarm"))
TEAM = "bench"
WARMUP = 3


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def stamp(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def send(number: int) -> float:
    """`swarm send` to the lead; the wall-clock time it started."""
    started = time.time()
    subprocess.run([SWARM, "send", LEAD_NAME, f"report {number}", "--from", "alice",
                    "--summary", f"report {number}", "--team", TEAM], check=True,
                   capture_output=True)
    return started


def start_team() -> None:
    team = Team.create(TEAM)
    subprocess.run([SWARM, "spawn", "alice", "--model", "shell", "--team", team.name],
                   check=True, capture_output=True)
    deadline = time.monotonic() + 30
    while (state := read_state(TEAM, "alice")) is None or state.state != "idle":
        if time.monotonic() > deadline:
            raise SystemExit("alice did not start")
        time.sleep(0.05)


async def rounds(count: int) -> tuple[list[float], list[float]]:
    passed = {k: v for k, v in os.environ.items() if k.startswith("SWARM_")}
    params = StdioServerParameters(command=SWARM, args=["mcp", "serve", "--team", TEAM],
                                   env=passed, cwd=str(HOME))
    delivered: list[float] = []
    end_to_end: list[float] = []
    box = Team(TEAM).inbox(LEAD_NAME, checked=False)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for number in range(WARMUP + count):
            returned: list[float] = []

            async def wait(returned: list[float] = returned) -> None:
                result = await session.call_tool("WaitForTeam", {"timeout_s": 30})
                returned.append(time.time())
                text = "".join(getattr(b, "text", "") for b in result.content)
                assert text.startswith("woke: message"), text

            async with anyio.create_task_group() as group:
                group.start_soon(wait)
                started = await anyio.to_thread.run_sync(send, number)
            [message] = box.unread()
            await session.call_tool("ReadInbox", {})
            if number >= WARMUP:
                delivered.append((returned[0] - stamp(message.timestamp)) * 1000)
                end_to_end.append((returned[0] - started) * 1000)
    return delivered, end_to_end


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    try:
        start_team()
        delivered, end_to_end = anyio.run(rounds, count)
    finally:
        Team.delete(TEAM, force=True)
        shutil.rmtree(HOME, ignore_errors=True)
    print(f"swarm mcp serve: `swarm send` to the lead -> a waiting WaitForTeam returns"
          f" ({count} messages, cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f})")
    for name, values in (("delivered -> returned", delivered),
                         ("`swarm send` start -> returned", end_to_end)):
        print(f"  {name:<31} p50 {statistics.median(values):6.1f} ms"
              f"  p99 {percentile(values, 99):6.1f} ms  max {max(values):6.1f} ms")


if __name__ == "__main__":
    main()
