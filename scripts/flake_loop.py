#!/usr/bin/env python3
"""Run the test suite again and again and tally every failure: how flaky tests are found.

Each run is `make test` then `make test-agents` (the README's commands, their workers and
settings; `--target test` for one of them) with `CI=true`, in a fresh clone of HEAD by default (a green working tree can hide a missing step), optionally with
the machine kept busy by `--load N` spinning processes. A failing test's id, its run and the
first line of its error go to the tally; the loop goes on. At the end (or on Ctrl-C) it prints
how many runs failed and each failing test with how often.

Run: .venv/bin/python scripts/flake_loop.py [--runs N] [--load N] [--here] [--target T ...]
     [-- PYTEST ARGS]
     (`make flake-hunt` runs 5 fresh-clone runs under one spinning core)
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def spin() -> None:
    while True:
        pass


def fresh_clone(into: Path) -> Path:
    """A clone of HEAD with its own venv, as CI makes it (the venv is reused across runs)."""
    checkout = into / "swarm"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(checkout)], check=True)
    return checkout


def one_run(checkout: Path, extra: list[str], number: int, report: Path,
            target: str = "test") -> tuple[int, float]:
    env = {**os.environ, "CI": "true"}
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "SWARM_HOME", "SWARM_TEAM",
                "SWARM_AGENT_ID", "SWARM_STORE", "TMUX"):
        env.pop(var, None)
    args = f"--junitxml={report} {' '.join(extra)}".strip()
    began = time.monotonic()
    proc = subprocess.run(["make", "-s", target, f"PYTEST_ARGS={args}"], cwd=checkout, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    took = time.monotonic() - began
    tail = [line for line in proc.stdout.splitlines() if " passed" in line or " failed" in line]
    print(f"run {number} ({target}): exit {proc.returncode} in {took:.0f} s: "
          f"{tail[-1] if tail else ''}",
          flush=True)
    return proc.returncode, took


def failures(report: Path) -> list[tuple[str, str]]:
    """(test id, first line of its failure) from a JUnit XML report."""
    try:
        tree = ET.parse(report)
    except (OSError, ET.ParseError):
        return [("(no report: the run did not finish)", "")]
    found = []
    for case in tree.iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            test = f"{case.get('classname', '')}::{case.get('name', '')}"
            found.append((test, (bad.get("message") or "").splitlines()[0][:160]
                          if bad.get("message") else ""))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--load", type=int, default=0, help="processes spinning meanwhile")
    parser.add_argument("--here", action="store_true", help="this checkout, not a fresh clone")
    parser.add_argument("--target", action="append", choices=["test", "test-agents"],
                        help="the make targets of a run (both by default)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    spinners = [mp.Process(target=spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    work = Path(tempfile.mkdtemp(prefix="swarm-flakes-"))
    tally: collections.Counter[str] = collections.Counter()
    seen: dict[str, list[str]] = collections.defaultdict(list)
    failed_runs, times = 0, []
    try:
        checkout = ROOT if args.here else fresh_clone(work)
        for number in range(1, args.runs + 1):
            found: list[tuple[str, str]] = []
            code, took = 0, 0.0
            for target in args.target or ["test", "test-agents"]:
                report = work / f"run-{number}-{target}.xml"
                target_code, target_took = one_run(checkout, args.pytest_args, number, report,
                                                   target)
                code, took = code or target_code, took + target_took
                found += failures(report) if target_code != 0 else []
            times.append(took)
            failed_runs += bool(found) or code != 0
            for test, why in found:
                tally[test] += 1
                seen[test].append(f"run {number}: {why}")
                print(f"  FAILED {test}: {why}", flush=True)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        for spinner in spinners:
            spinner.terminate()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{len(times)} run(s), {failed_runs} failed; wall {min(times, default=0):.0f}-"
          f"{max(times, default=0):.0f} s; load {args.load} spinning")
    for test, count in tally.most_common():
        print(f"{count}x {test}")
        for line in seen[test]:
            print(f"     {line}")
    sys.exit(1 if failed_runs else 0)


if __name__ == "__main__":
    main()
