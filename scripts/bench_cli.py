#!/usr/bin/env python3
"""CLI start-up benchmark: each command's median wall time over the bare interpreter.

Every sample is a fresh process of the installed `swarm` executable, against a real team in a
temporary SWARM_HOME: a live, idle `shell` teammate (hidden backend) named `worker` and three
tasks. Rows: `python -c pass` (the floor, the interpreter next to the executable), `swarm
--help`, `swarm --version` (= `-V`), `swarm send`, `swarm status`, `swarm tasks list`, and
`swarm spawn` (the command's own time; the teammate it starts is stopped outside the timing).
The samples are interleaved (one of each command in turn), so load that comes and goes on a
shared machine falls on every row alike; each row shows its median wall time, that minus the
interpreter's, the CPU median, and the goal.

Several executables (`--swarm A --swarm B`, e.g. an older checkout's venv) are measured in the
same run, interleaved too (A, B, A, B ...), so the figures compare in the same minutes.

`--instructions` adds each command's instruction count, once, under valgrind's cachegrind: it
does not change with the load on the machine, so it compares two versions on a busy machine.

Run: .venv/bin/python scripts/bench_cli.py [--runs 21] [--swarm PATH ...] [--instructions]
(2-10 minutes, more with --instructions)
"""

from __future__ import annotations

import argparse
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WARMUP = 2
# command label -> (arguments, goal over the interpreter in ms or None)
COMMANDS: dict[str, tuple[list[str], float | None]] = {
    "swarm --help": (["--help"], 100.0),
    "swarm --version (-V)": (["--version"], None),
    "swarm send": (["send", "worker", "bench message", "--summary", "bench"], 150.0),
    "swarm status": (["status"], 150.0),
    "swarm tasks list": (["tasks", "list"], None),
}
SPAWN = "swarm spawn (command only)"
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
FLOOR = "python -c pass"


@dataclass
class Target:
    swarm: Path
    home: Path
    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)
    instructions: dict[str, float] = field(default_factory=dict)  # millions, --instructions
    spawned: int = 0

    @property
    def python(self) -> Path:
        return self.swarm.with_name("python")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("SWARM_MODEL", "SWARM_BACKEND", "SWARM_DEBUG", "ANTHROPIC_API_KEY",
                            "TMUX", "COLUMNS")}
        return {**env, "SWARM_HOME": str(self.home), "SWARM_TEAM": "bench"}

    def run(self, argv: list[str]) -> tuple[float, float, str]:
        """(wall ms, CPU ms, stderr) of one process, which must succeed."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, env=self.env(), cwd=self.home,
                              timeout=600)
        wall = (time.perf_counter() - start) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"{argv!r} failed ({proc.returncode}): {proc.stderr.strip()}")
        cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        return wall, cpu, proc.stderr

    def swarm_cmd(self, *args: str) -> str:
        proc = subprocess.run([str(self.swarm), *args], capture_output=True, text=True,
                              env=self.env(), cwd=self.home, timeout=120)
        if proc.returncode != 0:
            raise SystemExit(f"swarm {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def compile(self) -> None:
        """Byte-compile the target's own packages, as an install from a wheel is: a source newer
        than its .pyc (an edited checkout, PYTHONDONTWRITEBYTECODE) would be compiled at every
        start and measured as start-up."""
        where = subprocess.run([str(self.python), "-c", "import os, swarm; "
                                "print(os.path.dirname(os.path.dirname(swarm.__file__)))"],
                               capture_output=True, text=True, check=True).stdout.strip()
        packages = [str(Path(where) / p) for p in ("swarm", "backends")
                    if (Path(where) / p).is_dir()]
        subprocess.run([str(self.python), "-m", "compileall", "-q", *packages], check=True,
                       stdout=subprocess.DEVNULL)

    def setup(self) -> None:
        self.compile()
        self.swarm_cmd("team", "create", "bench", "--description", "bench_cli")
        for subject in ("parse the input", "check the parser", "write the docs"):
            self.swarm_cmd("tasks", "add", subject)
        self.swarm_cmd("spawn", "worker", "--backend", "hidden", "--model", "shell")
        self.wait_idle("worker")

    def state(self, name: str) -> dict[str, object]:
        path = self.home / "teams" / "bench" / "agents" / name / "state.json"
        try:
            return dict(json.loads(path.read_text()))
        except (OSError, ValueError):
            return {}

    def wait_idle(self, name: str) -> None:
        deadline = time.monotonic() + 60
        while self.state(name).get("state") != "idle":
            if time.monotonic() > deadline:
                raise SystemExit(f"{name} did not go idle within 60 s")
            time.sleep(0.01)

    def sample(self, label: str, count: bool = False) -> None:
        """One run of `label`; with `count`, under valgrind, recording its instructions (the
        same on a busy machine as on a quiet one, unlike any time)."""
        if label == FLOOR:
            argv = [str(self.python), "-c", "pass"]
        elif label == SPAWN:
            self.spawned += 1
            argv = [str(self.swarm), "spawn", f"s{self.spawned}", "--backend", "hidden",
                    "--model", "shell"]
        else:
            argv = [str(self.swarm), *COMMANDS[label][0]]
        if count:
            _, _, err = self.run([*VALGRIND, *argv])
            refs = next(line for line in err.splitlines() if "I   refs:" in line)
            self.instructions[label] = int(refs.split()[-1].replace(",", "")) / 1e6
        else:
            wall, cpu, _ = self.run(argv)
            self.wall.setdefault(label, []).append(wall)
            self.cpu.setdefault(label, []).append(cpu)
        if label == SPAWN:  # let the teammate start and stop it, outside the timing
            name = f"s{self.spawned}"
            self.wait_idle(name)
            self.stop(name)

    def stop(self, name: str) -> None:
        pid = self.state(name).get("pid")
        if isinstance(pid, int):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + 10  # not our child: init reaps it
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                time.sleep(0.01)

    def teardown(self) -> None:
        for agent in (self.home / "teams" / "bench" / "agents").glob("*"):
            self.stop(agent.name)
        shutil.rmtree(self.home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="samples per command (after 2 warm-ups)")
    parser.add_argument("--swarm", action="append", type=Path, default=None,
                        help="a swarm executable (repeat to compare; default: this checkout's)")
    parser.add_argument("--no-spawn", action="store_true", help="leave out `swarm spawn`")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions once under valgrind")
    options = parser.parse_args()
    # Stopped with SIGTERM (or SIGINT, which a background job ignores): stop the teammates too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    executables = options.swarm or [Path(sys.executable).with_name("swarm")]
    base = Path(tempfile.mkdtemp(prefix="swarm-bench-cli-"))
    targets = [Target(exe.absolute(), base / f"home{i}") for i, exe in enumerate(executables)]
    labels = [FLOOR, *COMMANDS, *([] if options.no_spawn else [SPAWN])]
    load_before = os.getloadavg()
    try:
        for target in targets:
            target.home.mkdir(parents=True)
            target.setup()
        for round_no in range(WARMUP + options.runs):
            for label in labels:
                for target in targets:
                    target.sample(label)
            if round_no == WARMUP - 1:
                for target in targets:
                    target.wall.clear()
                    target.cpu.clear()
        for label in labels if options.instructions else []:
            for target in targets:
                target.sample(label, count=True)
    finally:
        for target in targets:
            target.teardown()
        shutil.rmtree(base, ignore_errors=True)
    load_after = os.getloadavg()

    print(f"swarm CLI start-up ({os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"{options.runs} interleaved samples each; load average {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after)")
    ok = True
    for target in targets:
        floor = statistics.median(target.wall[FLOOR])
        print(f"\n{target.swarm}")
        head = (f"  {'command':<28} {'wall ms':>8} {'over python':>12} {'CPU ms':>7}"
                f"{'  M instr' if target.instructions else ''}  goal")
        print(head)
        for label in labels:
            wall = statistics.median(target.wall[label])
            cpu = statistics.median(target.cpu[label])
            goal = COMMANDS[label][1] if label in COMMANDS else None
            over = wall - floor
            verdict = "" if goal is None else (f"<= +{goal:.0f} ms "
                                               + ("yes" if over <= goal else "NO"))
            ok = ok and (goal is None or over <= goal)
            count = (f" {target.instructions[label]:8.0f}" if target.instructions else "")
            print(f"  {label:<28} {wall:8.0f} {over if label != FLOOR else 0:+12.0f} "
                  f"{cpu:7.0f}{count}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
