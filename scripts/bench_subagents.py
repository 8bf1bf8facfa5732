#!/usr/bin/env python3
"""Subagent benchmark: memory per running subagent, start latency, fork cache prefix.

One real `swarm agent --model sonnet` teammate (hidden backend) talks through the official SDK to
the local fake Messages API (tests/support/fake_anthropic.py; no network), and uses its `Agent` tool:
- memory: the teammate's RSS when idle after one call, then with N background subagents all
  running (each one's model request held open by the fake API); per subagent = the difference
  / N. Baseline: a subagent as a process would cost at least a whole teammate's RSS.
- start latency: from the `Agent` tool call (foreground `explore`) of a teammate's `Agent` host
  built in this process to the subagent's first request arriving at the fake API (the runner,
  the thread, the request's build and send through the SDK), 40 samples. Context: the same seen
  from the API by the teammate process (from sending the reply that calls `Agent`: adds the
  parent's own reply handling). Baseline: spawning a teammate process (bench_agents: ~1 s).
- fork prefix: after a conversation of 12 Bash calls (~3 KB of output each) the teammate forks;
  the fork's first request is compared with the teammate's last one, part by part in the JSON
  the SDK sent (system, tools, each message). Bad case: the same fork request built without
  the extra cache breakpoint (as a plain request would be).

Run: .venv/bin/python scripts/bench_subagents.py   (about 30 s)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(tempfile.mkdtemp(prefix="swarm-bench-subagents-"))
os.environ["SWARM_HOME"] = str(HOME / "swarm-home")
for var in ("SWARM_MODEL", "SWARM_BACKEND", "SWARM_DEBUG", "TMUX", "SWARM_TEAM"):
    os.environ.pop(var, None)
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from swarm.core.store.liveness import is_alive  # noqa: E402
from swarm.core.team.state import read_state  # noqa: E402
from swarm.core.team.team import Team  # noqa: E402
from swarm.ops.member.spawner import SpawnRequest, spawn  # noqa: E402
from swarm.runtime.models.anthropic_model import build_params  # noqa: E402
from swarm.runtime.models.base import ModelRequest  # noqa: E402
from swarm.runtime.teammate.agent import Agent  # noqa: E402
from swarm.runtime.tools.base import run_tool  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, Scripted  # noqa: E402

RUNNING = 20
SAMPLES = 40
FORK_HISTORY = 12
MB = 1024 * 1024


def wait_for(check: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.01)


def turns_done(team: Team, name: str, turns: int) -> Callable[[], bool]:
    def check() -> bool:
        state = read_state(team.name, name)
        return state is not None and state.state == "idle" and state.turns >= turns
    return check


def is_sub(body: dict[str, Any]) -> bool:
    return "# You are a subagent" in body.get("system", [{}])[0].get("text", "")


def is_fork(body: dict[str, Any]) -> bool:
    return "<fork-rule>" in json.dumps(body["messages"])


def text(value: str) -> Scripted:
    return Scripted(200, {"content": [{"type": "text", "text": value}], "stop_reason": "end_turn"})


def agent_call(n: int, **extra: Any) -> Scripted:
    args = {"description": f"job {n}", "prompt": f"Look into part {n}.", **extra}
    return Scripted(200, {"content": [{"type": "tool_use", "id": f"toolu_a{n:04d}",
                                       "name": "Agent", "input": args}],
                          "stop_reason": "tool_use"})


def bench_memory(api: FakeAnthropic, team: Team, pid: int) -> tuple[float, float]:
    proc = psutil.Process(pid)
    time.sleep(1.0)
    before = proc.memory_info().rss
    release = threading.Event()
    route = api.route(is_sub)
    for _ in range(RUNNING):
        route.push(lambda body: (release.wait(120), text("report"))[1])
    api.push_message([{"type": "tool_use", "id": f"toolu_m{n:03d}", "name": "Agent",
                       "input": {"description": f"job {n}", "prompt": f"Look into part {n}.",
                                 "subagent_type": "general-purpose", "run_in_background": True}}
                      for n in range(RUNNING)], stop_reason="tool_use")
    api.push(text("started them"))
    team.send("host", "start the background jobs", summary="jobs")
    wait_for(lambda: sum(1 for b in api.messages_requests() if is_sub(b)) >= RUNNING, 60,
             "every subagent's first request")
    wait_for(turns_done(team, "host", 3), 30, "the host to idle")
    time.sleep(1.0)
    running = proc.memory_info().rss
    state = read_state(team.name, "host")
    assert state is not None and sum(s.status == "running" for s in state.subagents) == RUNNING
    release.set()
    wait_for(lambda: (s := read_state(team.name, "host")) is not None and not any(
        x.status == "running" for x in s.subagents) and s.state == "idle", 60, "subagents to end")
    api._routes.remove(route)
    return before / MB, (running - before) / RUNNING / MB


def bench_latency_in_process(api: FakeAnthropic, team: Team) -> list[float]:
    team.add_member("solo", model="sonnet", permission_mode="bypassPermissions",
                    cwd=str(HOME / "work"), backend="hidden")
    arrived: list[float] = []

    def first(body: dict[str, Any]) -> Scripted:
        arrived.append(time.perf_counter())
        return text("nothing to report")

    with contextlib.redirect_stdout(io.StringIO()):  # the host's console lines
        agent = Agent(team.name, "solo")
        api.push_text("warm")  # its first call: the SDK client and a pooled connection
        agent.loop.run([{"type": "text", "text": "hi"}])
        route = api.route(is_sub)
        samples = []
        for n in range(SAMPLES):
            route.push(first)
            started = time.perf_counter()
            result = run_tool(agent.loop.tools["Agent"], {
                "description": f"job {n}", "prompt": "Look.", "subagent_type": "explore"},
                agent.loop.ctx)
            assert not result.is_error, result.content
            samples.append((arrived[-1] - started) * 1000)
    api._routes.remove(route)
    return samples


def bench_latency(api: FakeAnthropic, team: Team) -> list[float]:
    sent: list[float] = []
    arrived: list[float] = []

    def call(n: int) -> Callable[[dict[str, Any]], Scripted]:
        def reply(body: dict[str, Any]) -> Scripted:
            sent.append(time.perf_counter())
            return agent_call(n, subagent_type="explore")
        return reply

    def first(body: dict[str, Any]) -> Scripted:
        arrived.append(time.perf_counter())
        return text("nothing to report")

    route = api.route(is_sub)
    for n in range(SAMPLES):
        api.push(call(n))
        route.push(first)
    api.push(text("measured"))
    before = read_state(team.name, "host")
    assert before is not None
    team.send("host", "measure", summary="measure")
    wait_for(turns_done(team, "host", before.turns + SAMPLES + 1), 120, "the latency samples")
    api._routes.remove(route)
    return [(a - s) * 1000 for s, a in zip(sent, arrived, strict=True)]


def bench_fork(api: FakeAnthropic, team: Team) -> dict[str, Any]:
    for n in range(FORK_HISTORY):
        api.push_tool_use("Bash", {"command": f"seq {n} {n + 700}"})
    api.push(agent_call(999))  # no subagent_type: a fork
    route = api.route(is_fork)
    route.push_text("fork report")
    api.push_text("forked")
    before = len(api.requests)
    team.send("host", "build up a history, then fork", summary="fork")
    wait_for(lambda: any(is_fork(r.body) for r in api.requests[before:]), 60, "the fork")
    state = read_state(team.name, "host")
    assert state is not None
    wait_for(turns_done(team, "host", state.turns + 1), 60, "the host to idle")
    received = [r for r in api.requests[before:] if r.path.startswith("/v1/messages")]
    fork = next(r for r in received if is_fork(r.body))
    parent = [r for r in received if not is_fork(r.body)]
    last = parent[FORK_HISTORY]  # the request whose reply called Agent
    return compare(last.body, fork.body)


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def compare(last: dict[str, Any], fork: dict[str, Any]) -> dict[str, Any]:
    k = len(last["messages"])
    same = {key: size(last[key]) for key in ("system", "tools") if last[key] == fork[key]}
    same_messages = [i for i in range(k) if json.dumps(last["messages"][i])
                     == json.dumps(fork["messages"][i])]
    identical = sum(same.values()) + sum(size(fork["messages"][i]) for i in same_messages)
    tail = size(fork["messages"][k:])
    # Bad case: the fork's request without the mark on the parent's last block.
    plain = build_params(fork["model"], ModelRequest("", _strip(fork["messages"]), []))
    plain_same = [i for i in range(k) if json.dumps(last["messages"][i])
                  == json.dumps(plain["messages"][i])]
    plain_identical = sum(same.values()) + sum(size(plain["messages"][i]) for i in plain_same)
    parent = size(last["system"]) + size(last["tools"]) + sum(size(m) for m in last["messages"])
    return {"parent_bytes": parent,
            "identical": identical, "tail": tail, "prefix_messages": k,
            "all_parent_parts_same": len(same) == 2 and len(same_messages) == k,
            "plain_identical": plain_identical, "plain_same_messages": len(plain_same)}


def _strip(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"}
                              for b in m["content"]]} for m in messages]


def main() -> int:
    pid = 0
    with FakeAnthropic() as api:
        os.environ.update(ANTHROPIC_API_KEY="bench-key", ANTHROPIC_BASE_URL=api.base_url,
                          NO_PROXY="127.0.0.1", HOME=str(HOME))
        team = Team.create("bench")
        work = HOME / "work"
        work.mkdir()
        try:
            api.push_text("ready")
            result = spawn(team, SpawnRequest("host", prompt="say ready", model="sonnet",
                                              backend="hidden", cwd=str(work),
                                              permission_mode="bypassPermissions"))
            pid = result.pid or 0
            wait_for(turns_done(team, "host", 1), 60, "the host's first turn")
            teammate_rss, per_sub = bench_memory(api, team, pid)
            latency = bench_latency_in_process(api, team)
            seen = bench_latency(api, team)
            fork = bench_fork(api, team)
        finally:
            if pid and is_alive(pid):
                psutil.Process(pid).terminate()
                wait_for(lambda: not is_alive(pid), 10, "the host to exit")
            shutil.rmtree(HOME, ignore_errors=True)

    p50 = statistics.median(latency)
    p90 = sorted(latency)[int(len(latency) * 0.9) - 1]
    share = fork["identical"] / (fork["identical"] + fork["tail"])
    plain_share = fork["plain_identical"] / (fork["identical"] + fork["tail"])
    rows = [
        (f"RSS per running subagent ({RUNNING} in the background)", "<= 8 MB",
         f"{per_sub:.2f} MB", per_sub <= 8),
        ("  baseline: one idle sonnet teammate process", "-", f"{teammate_rss:.1f} MB", True),
        (f"Agent call -> subagent's first request, p50 ({SAMPLES})", "<= 20 ms",
         f"{p50:.1f} ms", p50 <= 20),
        ("  p90 / max", "-", f"{p90:.1f} / {max(latency):.1f} ms", True),
        ("  seen from the API: reply calling Agent -> first request, p50 / p90", "-",
         f"{statistics.median(seen):.1f} / {sorted(seen)[int(len(seen) * 0.9) - 1]:.1f} ms", True),
        ("  machine load average (1 min) at the end", "-", f"{os.getloadavg()[0]:.1f}", True),
        ("fork's first request: parent's last request reused", "all of it",
         f"{fork['identical']} of {fork['parent_bytes']} B"
         + (" (system, tools, every message)" if fork["all_parent_parts_same"] else " (NOT all)"),
         fork["all_parent_parts_same"] and fork["identical"] == fork["parent_bytes"]),
        ("  share of the fork's request byte-identical", "all but the tail",
         f"{share * 100:.1f} % (new tail {fork['tail']} B)", fork["all_parent_parts_same"]),
        ("  bad case: no breakpoint on the parent's last block", "-",
         f"{plain_share * 100:.1f} % ({fork['plain_same_messages']} of"
         f" {fork['prefix_messages']} messages the same)", True),
    ]
    widths = [max(len(str(r[i])) for r in rows) for i in range(3)]
    head = ("metric", "goal", "measured")
    widths = [max(w, len(h)) for w, h in zip(widths, head, strict=True)]
    print(f"swarm subagent benchmark ({os.cpu_count()} cores, Python {sys.version.split()[0]})")
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + "  pass")
    for row in rows:
        cells = [str(c).ljust(w) for c, w in zip(row[:3], widths, strict=True)]
        print("  ".join(cells) + "  " + ("yes" if row[3] else "NO"))
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
