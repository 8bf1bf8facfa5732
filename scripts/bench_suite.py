#!/usr/bin/env python3
"""Where the CPU of `make test` goes: the machine's busy core-seconds and every Python process's.

`make test` is CPU-bound on 2 cores (the machine is busy almost the whole run), so its wall time
follows the CPU its processes spend. This runs it once (in this checkout, with its own workers
and settings) and prints:

- wall time, and the machine's busy and idle core-seconds from /proc/stat over the run (only
  meaningful on an otherwise quiet machine: every process counts);
- a census of the Python processes the tests start: each one, at its exit, appends its CPU
  time, the SDKs it had imported and what it was (`swarm agent`, `swarm lead`, a `swarm`
  command, a fake agent, a pytest worker) to a file, through a `sitecustomize` put first on
  PYTHONPATH. A process killed by a signal writes nothing: the gap between the census and the
  machine's busy time is those, tmux, git, bash, sshd and redis-server.

Run: .venv/bin/python scripts/bench_suite.py [--venv DIR] [--census FILE] [-- PYTEST ARGS]
(one whole `make test`; the test files whose processes cost most are listed last)
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP_FILES = 25  # the test files listed, by the CPU of the processes they started
SDKS = ("anthropic", "openai", "mcp", "acp", "textual", "redis", "_pytest")

# Runs at every Python start under PYTHONPATH; writes one line at a normal exit.
CENSUS = """
import atexit, os, resource, sys

def _census():
    try:
        use = resource.getrusage(resource.RUSAGE_SELF)
        sdks = [m for m in {sdks!r} if m in sys.modules]
        argv = " ".join(sys.argv).replace("\\t", " ").replace("\\n", " ")[:300]
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]  # whose process it is
        line = "%.3f\\t%s\\t%s\\t%s\\n" % (use.ru_utime + use.ru_stime, ",".join(sdks), test, argv)
        with open({log!r}, "a") as out:
            out.write(line)
    except Exception:
        pass

atexit.register(_census)
"""


def busy_idle() -> tuple[float, float]:
    """The machine's busy and idle core-seconds since boot (/proc/stat, USER_HZ 100)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]
    return (sum(ticks) - idle) / 100, idle / 100


def kind(sdks: str, argv: str) -> str:
    words = argv.split()
    if "_pytest" in sdks:
        return "pytest (controller and workers)"
    if words and (words[0] == "swarm" or words[0].endswith("/swarm")):  # forked: "swarm"
        sub = words[1] if len(words) > 1 else ""
        if sub in ("agent", "lead", "acp"):
            what = {"agent": "swarm agent (teammates)", "lead": "swarm lead",
                    "acp": "swarm acp"}[sub]
            return f"{what}, {'with' if 'anthropic' in sdks else 'without'} the Anthropic SDK"
        if sub == "mcp":
            return "swarm mcp (serve, hub)"
        return "other swarm commands"
    if "fake_acp_agent" in argv or "fake-acp" in argv:
        return "the fake ACP agent"
    return "other Python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--census", type=Path, help="also keep every process's line here (TSV)")
    parser.add_argument("--venv", default=".venv",
                        help="the venv to test with (make's VENV; e.g. one made from another "
                             "interpreter; run them one after the other to compare)")
    parser.add_argument("pytest_args", nargs="*", help="passed on as PYTEST_ARGS")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="swarm-suite-") as tmp:
        log = Path(tmp) / "census.tsv"
        (Path(tmp) / "sitecustomize.py").write_text(CENSUS.format(sdks=SDKS, log=str(log)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (tmp, os.environ.get("PYTHONPATH", "")) if p)}
        busy0, idle0 = busy_idle()
        began = time.monotonic()
        proc = subprocess.run(["make", "-s", "test", f"VENV={args.venv}",
                               f"PYTEST_ARGS={' '.join(args.pytest_args)}"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        wall = time.monotonic() - began
        busy1, idle1 = busy_idle()
        raw = log.read_text() if log.exists() else ""
        if args.census:
            args.census.write_text(raw)
        rows = [line.split("\t", 3) for line in raw.splitlines() if line.count("\t") >= 3]
    summary = [line for line in proc.stdout.splitlines() if " passed" in line or " failed" in line]
    busy, idle = busy1 - busy0, idle1 - idle0
    python = subprocess.run([str(Path(args.venv) / "bin" / "python"), "-c",
                             "import sys; print(sys.version.split()[0], sys._base_executable)"],
                            cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"make test: exit {proc.returncode}, {summary[-1] if summary else 'no summary'}")
    print(f"python {python}")
    for line in proc.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(line)
    if proc.returncode:  # what failed, whole, to stderr: a failure under load is not seen twice
        failures = proc.stdout.partition("= FAILURES =")[2] or proc.stdout[-20000:]
        print(failures.partition("short test summary info")[0], file=sys.stderr)
    print(f"wall {wall:.1f} s; machine busy {busy:.0f} core-s, idle {idle:.0f} core-s "
          f"({busy / (busy + idle):.0%} busy)")
    by: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for seconds, sdks, _test, argv in rows:
        entry = by[kind(sdks, argv)]
        entry[0] += 1
        entry[1] += float(seconds)
    total = sum(cpu for _, cpu in by.values())
    print("\n| processes that exited normally | count | CPU s | CPU s each |\n|---|---|---|---|")
    for name, (count, cpu) in sorted(by.items(), key=lambda item: -item[1][1]):
        print(f"| {name} | {count:.0f} | {cpu:.0f} | {cpu / count:.2f} |")
    print(f"| all of them | {sum(c for c, _ in by.values()):.0f} | {total:.0f} | |")
    print(f"| the rest of the machine's busy time (killed processes, tmux, git, bash, sshd, "
          f"redis-server, the kernel) | | {busy - total:.0f} | |")
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for seconds, sdks, test, _argv in rows:
        if test and "_pytest" not in sdks:  # a process a test started (PYTEST_CURRENT_TEST)
            counted = files[test.split("::")[0]]
            counted[0] += 1
            counted[1] += float(seconds)
    print("\n| test file (its processes) | count | CPU s |\n|---|---|---|")
    for name, (count, cpu) in sorted(files.items(), key=lambda item: -item[1][1])[:TOP_FILES]:
        print(f"| {name} | {count:.0f} | {cpu:.0f} |")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
