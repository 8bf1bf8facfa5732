#!/usr/bin/env python3
"""Mailbox benchmark: swarm's mailbox side by side with a re-creation of the
anchor, in the same run.

The anchor design (the mailbox this project improves on): every send takes the mailbox lock with
non-blocking attempts and 10 retries of 5-100 ms exponential backoff (it gives up, losing the
message, when they run out), reads the whole JSON array, appends, and rewrites the file. It never
compacts, and its reader polls every 500-1000 ms. swarm's side uses only the public API
(`swarm.core.team.team.Team`, `swarm.core.store.file.mailbox.Mailbox`) in a temporary SWARM_HOME.

Rows: throughput of 16 writer processes x 200 sends into one mailbox with nobody reading and with
a reader marking read; delivery latency to a process blocked in wait(); the cost of one send into
an empty mailbox, with 1,000 and 10,000 unread messages waiting, and after 10,000 read; idle CPU;
the `swarm send` CLI wall time.

Run: .venv/bin/python scripts/bench_mailbox.py   (about 1-2 minutes on 2 cores)
"""

from __future__ import annotations

import compileall
import contextlib
import fcntl
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HOME = Path(tempfile.mkdtemp(prefix="swarm-bench-"))
os.environ["SWARM_HOME"] = str(HOME / "swarm-home")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from swarm.core.records.protocol import Message  # noqa: E402
from swarm.core.store.api import Mailbox  # noqa: E402
from swarm.core.team.team import Team  # noqa: E402
from swarm.errors import SwarmError  # noqa: E402

WRITERS, PER_WRITER = 16, 200
LATENCY_SAMPLES, ANCHOR_LATENCY_SAMPLES = 200, 16
IDLE_SECONDS = 10.0
CLI_RUNS = 21
CTX = mp.get_context("fork")


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


# -- the anchor, re-created -----------------------------------------------------------------
ANCHOR_BACKOFF_MS = [min(5 * 2**i, 100) for i in range(10)]  # 5,10,20,40,80,100,100,100,100,100


@contextlib.contextmanager
def anchor_lock(path: Path) -> Any:
    """Yield True when the lock was taken, False when 1 try + 10 retries all failed."""
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        for delay in [*ANCHOR_BACKOFF_MS, None]:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if delay is None:
                    yield False
                    return
                time.sleep(delay / 1000)
                continue
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            return
    finally:
        os.close(fd)


def anchor_read(path: Path) -> list[dict[str, Any]]:
    try:
        return json.loads(path.read_bytes())  # type: ignore[no-any-return]
    except FileNotFoundError:
        return []


def anchor_write(path: Path, messages: list[dict[str, Any]]) -> None:
    # Compact JSON: Python's indenting encoder is pure Python and would flatter swarm.
    path.write_text(json.dumps(messages))


def anchor_message(sender: str, text: str, read: bool = False) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "from": sender, "text": text, "summary": text[:60],
            "color": "blue", "timestamp": now_iso(), "read": read}


def anchor_send(path: Path, sender: str, text: str) -> bool:
    with anchor_lock(path) as ok:
        if not ok:
            return False
        messages = anchor_read(path)
        messages.append(anchor_message(sender, text))
        anchor_write(path, messages)
        return True


def anchor_mark_all_read(path: Path) -> list[dict[str, Any]]:
    """One poll of the anchor's reader: take the unread messages and mark them read."""
    with anchor_lock(path) as ok:
        if not ok:
            return []
        messages = anchor_read(path)
        fresh = [m for m in messages if not m["read"]]
        for message in fresh:
            message["read"] = True
        if fresh:
            anchor_write(path, messages)
        return fresh


def anchor_poller(path: str, stop: Any, conn: Any = None) -> None:
    while not stop.is_set():
        time.sleep(random.uniform(0.5, 1.0))
        got = anchor_mark_all_read(Path(path))
        seen = time.monotonic()
        if conn is not None:
            for message in got:
                conn.send(seen - float(message["text"].split()[1]))


# -- throughput: 16 writers x 200 into one mailbox whose owner reads and marks read -------
def swarm_writer(team: str, sender: str, barrier: Any, out: Any) -> None:
    handle = Team.open(team)
    barrier.wait()
    ok = failed = 0
    for i in range(PER_WRITER):
        try:
            handle.send("owner", f"message {i} from {sender}", sender=sender, summary="bench")
            ok += 1
        except SwarmError:
            failed += 1
    out.put((ok, failed, time.monotonic()))


def swarm_owner(team: str, stop: Any) -> None:
    box = Team.open(team).inbox("owner")
    while not stop.is_set():
        fresh = box.wait(timeout=0.2)
        if fresh:
            box.mark_read([m.id for m in fresh])


def anchor_writer(path: str, sender: str, barrier: Any, out: Any) -> None:
    barrier.wait()
    ok = failed = 0
    for i in range(PER_WRITER):
        if anchor_send(Path(path), sender, f"message {i} from {sender}"):
            ok += 1
        else:
            failed += 1
    out.put((ok, failed, time.monotonic()))


def anchor_poller_owner(path: str, stop: Any) -> None:
    anchor_poller(path, stop)


def no_owner(target: str, stop: Any) -> None:
    """Nobody reads: a stalled or busy recipient, or a lead who never marks anything read."""
    stop.wait()


def run_throughput(writer: Callable[..., None], target: str, owner: Callable[..., None],
                   count: Callable[[], int]) -> dict[str, float]:
    barrier, out, stop = CTX.Barrier(WRITERS + 1), CTX.Queue(), CTX.Event()
    reader = CTX.Process(target=owner, args=(target, stop))
    reader.start()
    procs = [CTX.Process(target=writer, args=(target, f"w{i}", barrier, out))
             for i in range(WRITERS)]
    for proc in procs:
        proc.start()
    barrier.wait()
    start = time.monotonic()
    results = [out.get() for _ in procs]
    for proc in procs:
        proc.join()
    stop.set()
    reader.join()
    elapsed = max(r[2] for r in results) - start
    ok, failed = sum(r[0] for r in results), sum(r[1] for r in results)
    present = count()
    return {"rate": ok / elapsed, "lost": WRITERS * PER_WRITER - present, "failed": failed,
            "seconds": elapsed}


def throughput(with_reader: bool) -> tuple[dict[str, float], dict[str, float]]:
    team = Team.create("tput")
    for name in ["owner", *(f"w{i}" for i in range(WRITERS))]:
        team.add_member(name)
    box = team.inbox("owner")
    swarm = run_throughput(swarm_writer, team.name, swarm_owner if with_reader else no_owner,
                           lambda: len(box.messages(include_archive=True)))
    path = HOME / f"anchor-tput-{with_reader}.json"
    anchor = run_throughput(anchor_writer, str(path),
                            anchor_poller_owner if with_reader else no_owner,
                            lambda: len(anchor_read(path)))
    return swarm, anchor


# -- latency: send -> a receiver blocked in wait() in another process -------------------------
def swarm_receiver(team: str, n: int, conn: Any) -> None:
    box = Team.open(team).inbox("rx")
    conn.send("ready")
    got = 0
    while got < n:
        fresh = box.wait(timeout=5.0)
        seen = time.monotonic()
        for message in fresh:
            conn.send(seen - float(message.text.split()[1]))
        box.mark_read([m.id for m in fresh])
        got += len(fresh)


def swarm_latency() -> list[float]:
    team = Team.create("lat")
    team.add_member("rx")
    here, there = CTX.Pipe()
    proc = CTX.Process(target=swarm_receiver, args=(team.name, LATENCY_SAMPLES, there))
    proc.start()
    here.recv()
    out = []
    for _ in range(LATENCY_SAMPLES):
        time.sleep(random.uniform(0.002, 0.006))  # let the receiver block in wait() again
        team.send("rx", f"t0 {time.monotonic()!r}", summary="latency")
        out.append(here.recv())
    proc.join()
    return out


def anchor_latency(stop: Any) -> list[float]:
    path = HOME / "anchor-lat.json"
    here, there = CTX.Pipe()
    proc = CTX.Process(target=anchor_poller, args=(str(path), stop, there))
    proc.start()
    out = []
    for _ in range(ANCHOR_LATENCY_SAMPLES):
        time.sleep(random.uniform(0.0, 0.3))  # send at a random phase of the poll cycle
        anchor_send(path, "lead", f"t0 {time.monotonic()!r}")
        out.append(here.recv())
    return out


# -- send cost: empty mailbox, N unread waiting, N read (archived) -----------------------------
COST_SAMPLES = 300


def time_swarm_sends(team: Team, box: Mailbox, keep_reading: bool) -> float:
    costs = []
    for _ in range(COST_SAMPLES):
        start = time.perf_counter()
        ids = team.send("sc", "a short message", summary="cost")
        costs.append(time.perf_counter() - start)
        if keep_reading:
            box.mark_read(ids)  # untimed: keeps the mailbox in the state being measured
    return statistics.median(costs)


def fill(box: Mailbox, count: int, read: bool) -> None:
    for start in range(0, count, 500):
        batch = [Message(sender="team-lead", text="old news", summary="old")
                 for _ in range(min(500, count - start))]
        box.deliver(batch)
        if read:
            box.mark_read([m.id for m in batch])


def swarm_send_cost() -> dict[str, float]:
    """Median send cost: empty; with 1,000 and 10,000 unread waiting (nobody reads: each sample
    adds one more, so 10,000 ends at 10,300); after 10,000 read and archived."""
    out = {}
    for label, count, read in (("empty", 0, False), ("1k unread", 1000, False),
                               ("10k unread", 10_000, False), ("10k read", 10_000, True)):
        team = Team.create("cost")
        team.add_member("sc")
        box = team.inbox("sc")
        fill(box, count, read)
        assert len(box.unread()) == (0 if read else count)
        out[label] = time_swarm_sends(team, box, keep_reading=count == 0 or read)
    return out


def anchor_send_cost(history: int, samples: int, read: bool) -> float:
    path = HOME / f"anchor-cost-{history}.json"
    base = [anchor_message("lead", "old news", read=read) for _ in range(history)]
    costs = []
    for _ in range(samples):
        anchor_write(path, base)
        start = time.perf_counter()
        assert anchor_send(path, "lead", "a short message")
        costs.append(time.perf_counter() - start)
    return statistics.median(costs)


# -- CPU of a process idle in wait() ---------------------------------------------------------
def swarm_idler(team: str, conn: Any) -> None:
    box = Team.open(team).inbox("idle")
    conn.send("ready")
    box.wait(timeout=IDLE_SECONDS + 5)


def idle_cpu_and_anchor_latency() -> tuple[float, float, list[float]]:
    team = Team.create("idle")
    team.add_member("idle")
    anchor_box = HOME / "anchor-idle.json"
    anchor_write(anchor_box, [anchor_message("lead", "old news", read=True) for _ in range(100)])
    here, there = CTX.Pipe()
    stop = CTX.Event()
    swarm_proc = CTX.Process(target=swarm_idler, args=(team.name, there))
    anchor_proc = CTX.Process(target=anchor_poller, args=(str(anchor_box), stop))
    swarm_proc.start()
    here.recv()
    anchor_proc.start()
    time.sleep(0.5)  # past start-up: measure the idle state only
    procs = [psutil.Process(p.pid) for p in (swarm_proc, anchor_proc)]
    before = [sum(p.cpu_times()[:2]) for p in procs]
    start = time.monotonic()
    # The anchor's latency sample runs meanwhile: it is light, and saves 10 s of bench time.
    latencies = anchor_latency(stop)
    time.sleep(max(0.0, IDLE_SECONDS - (time.monotonic() - start)))
    used = [sum(p.cpu_times()[:2]) - b for p, b in zip(procs, before, strict=True)]
    elapsed = time.monotonic() - start
    stop.set()
    swarm_proc.terminate()
    for proc in (swarm_proc, anchor_proc):
        proc.join()
    return used[0] / elapsed * 100, used[1] / elapsed * 100, latencies


# -- `swarm send` as a CLI command -----------------------------------------------------------
LIBRARY_FLOOR = ("import click\nfrom pydantic import BaseModel\n"
                 "class M(BaseModel):\n    x: int\nM(x=1)")


def cli_send() -> dict[str, list[float]]:
    """Wall times of `swarm send`, interleaved with two floors measured in the same minutes:
    the bare interpreter and the libraries every command needs (click, pydantic, one model)."""
    exe = Path(sys.executable).parent / "swarm"
    if not exe.exists():
        exe = Path(shutil.which("swarm") or "swarm")
    # A regular install byte-compiles the package; an editable one under PYTHONDONTWRITEBYTECODE
    # (set in this sandbox) would recompile every edited module on every run instead.
    root = Path(__file__).resolve().parent.parent
    compileall.compile_dir(str(root / "swarm"), quiet=1)
    team = Team.create("cli")
    team.add_member("bob")
    argvs = {"send": [str(exe), "send", "bob", "hello from the shell", "--team", team.name],
             "python": [sys.executable, "-c", "pass"],
             "libraries": [sys.executable, "-c", LIBRARY_FLOOR]}
    times: dict[str, list[float]] = {key: [] for key in argvs}
    for i in range(CLI_RUNS + 2):
        for key, argv in argvs.items():
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            if i >= 2:  # the first runs warm the page cache
                times[key].append(time.perf_counter() - start)
    assert len(team.inbox("bob").messages()) == CLI_RUNS + 2
    return times


# -- report ----------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main() -> None:
    began = time.monotonic()
    print(f"swarm mailbox benchmark  ({os.cpu_count()} cores, SWARM_HOME={os.environ['SWARM_HOME']})")
    rows: list[tuple[str, str, str, str, bool]] = []
    gave_up: list[str] = []

    for with_reader in (False, True):
        swarm_t, anchor_t = throughput(with_reader)
        ratio = swarm_t["rate"] / anchor_t["rate"]
        who = "reader marks read" if with_reader else "no reader"
        rows.append((f"throughput {WRITERS}x{PER_WRITER}, {who} (msg/s)", ">= 10x anchor, 0 lost",
                     f"{swarm_t['rate']:.0f} ({ratio:.1f}x)", f"{anchor_t['rate']:.0f}",
                     ratio >= 10 and swarm_t["lost"] == 0))
        lost_pct = 100 * anchor_t["lost"] / (WRITERS * PER_WRITER)
        rows.append(("  lost messages", "0", f"{swarm_t['lost']:.0f}",
                     f"{anchor_t['lost']:.0f} ({lost_pct:.1f}%)", swarm_t["lost"] == 0))
        gave_up.append(f"{who}: anchor {anchor_t['failed']:.0f} sends gave up on the lock, "
                       f"swarm {swarm_t['failed']:.0f} failed")

    lat = swarm_latency()
    idle_swarm, idle_anchor, anchor_lat = idle_cpu_and_anchor_latency()
    p50, p99 = pct(lat, 50) * 1000, pct(lat, 99) * 1000
    a50, a99 = pct(anchor_lat, 50) * 1000, pct(anchor_lat, 99) * 1000
    rows.append((f"latency p50 (ms, n={len(lat)}/{len(anchor_lat)})", "<= 10", f"{p50:.1f}",
                 f"{a50:.0f}", p50 <= 10))
    rows.append(("latency p99 (ms)", "<= 50", f"{p99:.1f}", f"{a99:.0f}", p99 <= 50))

    cost = swarm_send_cost()
    anchor_cost = {"empty": anchor_send_cost(0, 50, read=False),
                   "1k unread": anchor_send_cost(1000, 30, read=False),
                   "10k unread": anchor_send_cost(10_000, 10, read=False),
                   "10k read": anchor_send_cost(10_000, 10, read=True)}
    names = {"empty": "empty mailbox", "1k unread": "1,000 unread", "10k unread": "10,000 unread",
             "10k read": "10,000 read (archived)"}
    for key, label in names.items():
        rows.append((f"send cost, {label} (ms)", "", f"{cost[key] * 1000:.2f}",
                     f"{anchor_cost[key] * 1000:.2f}", True))
    for key, label in (("10k unread", "10,000 unread"), ("10k read", "10,000 read")):
        rows.append((f"  {label} / empty", "<= 2x", f"{cost[key] / cost['empty']:.2f}x",
                     f"{anchor_cost[key] / anchor_cost['empty']:.0f}x",
                     cost[key] / cost["empty"] <= 2))

    rows.append((f"idle CPU in wait(), {IDLE_SECONDS:.0f} s (% core)", "<= 1", f"{idle_swarm:.2f}",
                 f"{idle_anchor:.2f}", idle_swarm <= 1))

    cli = cli_send()
    median = statistics.median(cli["send"]) * 1000
    rows.append((f"`swarm send` CLI wall (ms, n={len(cli['send'])})", "median <= 200",
                 f"{median:.0f} (p90 {pct(cli['send'], 90) * 1000:.0f})", "n/a", median <= 200))
    for key, label in (("python", "  same minutes: `python -c pass`"),
                       ("libraries", "  same minutes: click + pydantic + 1 model")):
        rows.append((f"{label} (ms)", "", f"{statistics.median(cli[key]) * 1000:.0f}", "", True))

    headers = ("metric", "goal", "swarm", "anchor", "pass")
    table = [headers, *((m, g, s, a, ("yes" if ok else "NO") if g else "") for m, g, s, a, ok in rows)]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    print()
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print("\nthroughput runs: " + "; ".join(gave_up) + ".")
    print(f"finished in {time.monotonic() - began:.0f} s")
    shutil.rmtree(HOME, ignore_errors=True)
    sys.exit(0 if all(ok for *_, ok in rows) else 1)


if __name__ == "__main__":
    main()
