#!/usr/bin/env python3
"""Replay benchmark: a recorded team job run again offline, against the run.

The job: `swarm lead --headless --record DIR` (the real CLI) whose lead model is the real
anthropic SDK against the local fake Messages API (tests/support/fake_anthropic.py), answering its
first input with 12 TaskCreate + 12 TaskUpdate (3 tasks per owner) + 4 SpawnTeammate calls
and every later wake with a short text; 4 offline `shell` teammates (real `swarm agent`
processes, hidden backend). Then `swarm replay DIR --json` with the fake server stopped.

Figures per run: the recorded run's wall time, the replay's (its own measure: from start to the
report), requests recorded and matched, members that diverged. `--latency S` makes each lead
call of the recorded run take S seconds more (a real model answers in seconds; the replay
never waits for one).

Run: .venv/bin/python scripts/bench_replay.py [--runs N] [--latency S]   (about a minute a run)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(tempfile.mkdtemp(prefix="swarm-bench-replay-"))
os.environ["SWARM_HOME"] = str(HOME / "swarm-home")
for var in ("SWARM_MODEL", "SWARM_BACKEND", "SWARM_DEBUG", "TMUX", "SWARM_TEAM", "SWARM_RECORD"):
    os.environ.pop(var, None)
os.environ.update(ANTHROPIC_API_KEY="bench", NO_PROXY="127.0.0.1", SWARM_SHUTDOWN_GRACE="10")
sys.path.insert(0, str(ROOT))

from tests.support.fake_anthropic import FakeAnthropic, Scripted, reply  # noqa: E402

SWARM = str(Path(sys.executable).parent / "swarm")
TEAMMATES = ("ada", "bo", "cy", "di")
PER_TEAMMATE = 3


def first_turn() -> list[tuple[str, dict[str, Any]]]:
    """A gate task (#1, the lead's) blocks the twelve until each has its owner: an owner must
    be a member, so the owners are set after the spawns, and no teammate may take another's
    task in between (the recorded run and its replay give each teammate the same tasks)."""
    tasks = len(TEAMMATES) * PER_TEAMMATE
    calls: list[tuple[str, dict[str, Any]]] = [
        ("TaskCreate", {"subject": "gate", "description": "the owners are being set"}),
        ("TaskUpdate", {"task_id": "1", "owner": "team-lead", "status": "in_progress"})]
    calls += [("TaskCreate", {"subject": f"task {n + 1}", "description": f"$ echo task-{n + 1}",
                              "blocked_by": ["1"]}) for n in range(tasks)]
    calls += [("SpawnTeammate", {"name": name, "prompt": "Work through your tasks.\n$ echo ready",
                                 "model": "shell", "permission_mode": "bypassPermissions"})
              for name in TEAMMATES]
    calls += [("TaskUpdate", {"task_id": str(n + 2), "owner": TEAMMATES[n % len(TEAMMATES)]})
              for n in range(tasks)]
    calls.append(("TaskUpdate", {"task_id": "1", "status": "completed", "result": "owners set"}))
    return calls


def record(directory: Path, team: str, latency: float) -> float:
    state = {"first": True}

    def lead_model(body: dict[str, Any]) -> Scripted:
        time.sleep(latency)
        if state["first"]:
            state["first"] = False
            return reply("Planning.", first_turn())
        return reply("OK.")

    with FakeAnthropic() as api:
        api.fallback = lead_model
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.base_url}
        started = time.monotonic()
        proc = subprocess.run(
            [SWARM, "lead", "--headless", "--model", "sonnet", "--teammate-model", "shell",
             "--backend", "hidden", "--permission-mode", "bypassPermissions", "--team", team,
             "--record", str(directory), "--timeout", "240",
             "Run the twelve tasks with four teammates."],
            capture_output=True, text=True, cwd=HOME, env=env, timeout=300)
        wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    return wall


def replay(directory: Path, team: str) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    proc = subprocess.run([SWARM, "replay", str(directory), "--team", team, "--json"],
                          capture_output=True, text=True, cwd=HOME, timeout=300)
    wall = time.monotonic() - started
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return wall, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.0,
                        help="seconds added to each lead call of the recorded run")
    args = parser.parse_args()
    print(f"bench_replay: 4 shell teammates x 3 tasks, fake-API lead (+{args.latency:.1f} s a"
          f" call); {args.runs} runs, medians; machine load {os.getloadavg()[0]:.1f}")
    rows: list[dict[str, float]] = []
    for n in range(args.runs):
        directory = HOME / f"rec-{n}"
        recorded = record(directory, f"rec{n}", args.latency)
        wall, report = replay(directory, f"again{n}")
        members = report["members"]
        row = {"recorded_s": recorded, "replay_s": wall,
               "requests": sum(m["recorded"] for m in members),
               "matched": sum(m["matched"] for m in members),
               "diverged": len(report["diverged"])}
        rows.append(row)
        where = ", ".join(f"{d['member']}@{d['request']}: {d['what']}" for d in report["diverged"])
        timing = ", ".join(f"{d['member']}@{d['request']}: {d['what']}" for d in report["timing"])
        print(f"  run {n + 1}: recorded {recorded:5.1f} s  replay {wall:5.1f} s  requests"
              f" {row['matched']:.0f}/{row['requests']:.0f} matched  diverged"
              f" {row['diverged']:.0f}" + (f" ({where})" if where else "")
              + (f"  timing: {timing}" if timing else ""))
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"median: recorded {med['recorded_s']:.1f} s, replay {med['replay_s']:.1f} s"
          f" ({med['replay_s'] / med['recorded_s']:.0%} of the run), {med['matched']:.0f} of"
          f" {med['requests']:.0f} requests matched, {med['diverged']:.0f} member(s) diverged")


if __name__ == "__main__":
    main()
