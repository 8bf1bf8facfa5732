#!/usr/bin/env python3
"""Store benchmark: the same runs on the file store and on Redis, one host.

Rows: 16 sender processes x 200 sends into one mailbox (throughput, lost); delivery latency to a
process blocked in wait() (p50/p99 over 200 sends); 8 processes claiming 200 tasks each from one
list (claims/s); the cost of one send with 10,000 unread messages waiting. Redis is a
redis-server this script starts on a free loopback port (no persistence) and stops after. For
the anchor's figures (the design this project improves on), run scripts/bench_mailbox.py.

Then the same Redis as a second host would be: behind a TCP proxy on another
loopback port that holds every chunk for half of --rtt-ms each way (`tc netem` needs the
sch_netem kernel module, which this kind of machine lacks). Rows: the measured round trip (PING)
and its floor 1/RTT; sends per second from one handle in a loop (one request each: the floor is
1/RTT); what `swarm send` does (open the team, then send: two requests); the 16-sender
throughput through the link (latency overlaps across processes).

Run: .venv/bin/python scripts/bench_store.py [--rtt-ms 1]   (about 1-2 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(tempfile.mkdtemp(prefix="swarm-bench-store-"))
os.environ["SWARM_HOME"] = str(ROOT / "swarm-home")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swarm.core.records.protocol import Message  # noqa: E402
from swarm.core.team.team import Team  # noqa: E402

FORK = mp.get_context("fork")
SENDERS, SENDS = 16, 200
CLAIMERS, TASKS_EACH = 8, int(os.environ.get("BENCH_TASKS_EACH", "25"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))  # throughput runs per store (median)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    directory = ROOT / "redis"
    directory.mkdir()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", str(directory)],
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise SystemExit("redis-server did not start")


def _pump(source: socket.socket, sink: socket.socket, delay: float) -> None:
    """Copy source to sink, each chunk `delay` seconds after it came (order kept). Threads and
    time.sleep, not an event loop: epoll waits in whole milliseconds."""
    chunks: queue.SimpleQueue[tuple[float, bytes]] = queue.SimpleQueue()

    def write() -> None:
        while True:
            due, data = chunks.get()
            if not data:
                break
            time.sleep(max(0.0, due - time.perf_counter()))
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    with contextlib.suppress(OSError):
        while data := source.recv(1 << 16):
            chunks.put((time.perf_counter() + delay, data))
    chunks.put((0.0, b""))


def _delay_proxy(port: int, target: int, delay: float, ready: mp.synchronize.Event) -> None:
    """Forward 127.0.0.1:port to target, each direction `delay` seconds late."""
    with socket.create_server(("127.0.0.1", port)) as server:
        ready.set()
        while True:
            client, _ = server.accept()
            upstream = socket.create_connection(("127.0.0.1", target))
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink, delay), daemon=True).start()


def far_redis(url: str, rtt_ms: float) -> tuple[mp.process.BaseProcess, str]:
    """`url`'s server behind a proxy on another loopback port that adds `rtt_ms` per round
    trip: what a Redis on a second host looks like."""
    port, ready = _free_port(), FORK.Event()
    target = int(url.rsplit(":", 1)[1].split("/")[0])
    proc = FORK.Process(target=_delay_proxy, args=(port, target, rtt_ms / 2000, ready),
                        daemon=True)
    proc.start()
    if not ready.wait(10):
        proc.kill()
        raise SystemExit("the delaying proxy did not start")
    return proc, f"redis://127.0.0.1:{port}/0"


def far(label: str) -> dict[str, float]:
    """Round trip, sends per second in a loop, `swarm send`'s two requests, 16 senders."""
    from swarm.core.store import select as stores
    from swarm.core.store.redis.store import RedisStore

    store = stores.team_store()
    assert isinstance(store, RedisStore)
    client = store.connection.client
    team = Team.create(f"{label}-far")
    team.add_member("owner")
    team.send("owner", "warm")
    pings, sends = [], []
    for number in range(200):  # a PING between sends: the floor measured in the same minutes
        began = time.perf_counter()
        client.ping()
        pings.append(time.perf_counter() - began)
        began = time.perf_counter()
        team.send("owner", f"m{number}")
        sends.append(time.perf_counter() - began)
    row = {"rtt": statistics.median(pings) * 1000, "send": statistics.median(sends) * 1000,
           "mean": sum(sends) / len(sends) * 1000}
    samples = []
    for number in range(50):
        began = time.perf_counter()
        Team.open(team.name).send("owner", f"o{number}")
        samples.append(time.perf_counter() - began)
    row["open_send"] = statistics.median(samples) * 1000
    row["throughput"], row["lost"] = throughput(f"{label}-far")
    return row


def _sender(team: str, index: int, count: int, barrier: mp.synchronize.Barrier) -> None:
    handle = Team.open(team)
    barrier.wait()
    for number in range(count):
        handle.send("owner", f"{index}:{number}", sender=f"w{index}")


def throughput(prefix: str) -> tuple[float, int]:
    team = Team.create(f"{prefix}-tp")
    team.add_member("owner")
    for index in range(SENDERS):
        team.add_member(f"w{index}")
    barrier = FORK.Barrier(SENDERS + 1)
    procs = [FORK.Process(target=_sender, args=(team.name, i, SENDS, barrier))
             for i in range(SENDERS)]
    for proc in procs:
        proc.start()
    barrier.wait()
    start = time.perf_counter()
    for proc in procs:
        proc.join()
    elapsed = time.perf_counter() - start
    got = len(team.inbox("owner").unread())
    return SENDERS * SENDS / elapsed, SENDERS * SENDS - got


def _reader(team: str, count: int, out: mp.Queue[list[float]]) -> None:
    box = Team.open(team).inbox("owner")
    lags: list[float] = []
    with box.watcher() as watcher:
        while len(lags) < count:
            unread = box.unread()
            now = time.time()
            lags += [now - float(m.text) for m in unread]
            if unread:
                box.mark_read([m.id for m in unread])
            else:
                watcher.wait(5.0)
    out.put(lags)


def latency(prefix: str) -> tuple[float, float]:
    team = Team.create(f"{prefix}-lat")
    team.add_member("owner")
    team.add_member("w")
    out: mp.Queue[list[float]] = FORK.Queue()
    reader = FORK.Process(target=_reader, args=(team.name, 200, out))
    reader.start()
    time.sleep(0.5)  # the reader is blocked in wait()
    for _ in range(200):
        team.send("owner", repr(time.time()), sender="w")
        time.sleep(0.016)
    lags = sorted(out.get(timeout=60))
    reader.join()
    return statistics.median(lags) * 1000, lags[int(len(lags) * 0.99) - 1] * 1000


def _claimer(team: str, name: str, barrier: mp.synchronize.Barrier, out: mp.Queue[int]) -> None:
    tasks = Team.open(team).tasks
    barrier.wait()
    claimed = 0
    while tasks.claim_next(name) is not None:
        claimed += 1
    out.put(claimed)


def claims(prefix: str) -> tuple[float, int]:
    team = Team.create(f"{prefix}-claim")
    names = [f"c{i}" for i in range(CLAIMERS)]
    for name in names:
        team.add_member(name)
    for number in range(CLAIMERS * TASKS_EACH):
        team.tasks.add(f"task {number}")
    barrier = FORK.Barrier(CLAIMERS + 1)
    out: mp.Queue[int] = FORK.Queue()
    procs = [FORK.Process(target=_claimer, args=(team.name, n, barrier, out)) for n in names]
    for proc in procs:
        proc.start()
    barrier.wait()
    start = time.perf_counter()
    total = sum(out.get(timeout=600) for _ in procs)
    elapsed = time.perf_counter() - start
    for proc in procs:
        proc.join()
    return total / elapsed, total


def _backlogged(prefix: str, unread: int) -> Team:
    team = Team.create(f"{prefix}-cost{unread}")
    team.add_member("owner")
    box = team.inbox("owner")
    for start in range(0, unread, 500):
        box.deliver([Message(sender="team-lead", text=f"m{i}")
                     for i in range(start, min(unread, start + 500))])
    return team


def send_costs(prefix: str, backlogs: tuple[int, ...] = (0, 10_000), pairs: int = 500
               ) -> list[float]:
    """The median cost (ms) of one send to a member with each backlog of unread messages, the
    sends interleaved (one to each in turn, `pairs` times), so a busy moment of the machine
    costs them alike."""
    teams = [_backlogged(prefix, n) for n in backlogs]
    samples: list[list[float]] = [[] for _ in teams]
    for _ in range(pairs):
        for team, out in zip(teams, samples, strict=True):
            began = time.perf_counter()
            team.send("owner", "x")
            out.append(time.perf_counter() - began)
    return [statistics.median(out) * 1000 for out in samples]


def run(label: str) -> dict[str, float]:
    row: dict[str, float] = {}
    # The median of a few runs of under a second each: one is at the mercy of a busy machine.
    runs = [throughput(f"{label}{n}") for n in range(REPEAT)]
    row["throughput"] = statistics.median(rate for rate, _ in runs)
    row["lost"] = sum(lost for _, lost in runs)
    print(f"{label}: throughput done", file=sys.stderr, flush=True)
    row["p50"], row["p99"] = latency(label)
    print(f"{label}: latency done", file=sys.stderr, flush=True)
    row["claims"], row["claimed"] = claims(label)
    print(f"{label}: claims done", file=sys.stderr, flush=True)
    row["cost0"], row["cost10k"] = send_costs(label)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rtt-ms", type=float, default=1.0,
                        help="round trip the far Redis adds (a delaying proxy); 0: no such run")
    args = parser.parse_args()
    began = time.monotonic()
    os.environ["SWARM_STORE"] = "file"
    results = {"file": run("file")}
    proc, url = start_redis()
    far_row: dict[str, float] = {}
    try:
        os.environ["SWARM_STORE"] = url
        results["redis"] = run("redis")
        if args.rtt_ms > 0:
            proxy, far_url = far_redis(url, args.rtt_ms)
            try:
                os.environ["SWARM_STORE"] = far_url
                far_row = far("far")
            finally:
                proxy.kill()
    finally:
        proc.terminate()
        proc.wait(10)
    file, red = results["file"], results["redis"]
    print(f"swarm store benchmark ({os.cpu_count()} cores; Redis {url})\n")
    print(f"{'metric':52} {'file':>10} {'redis':>10} {'redis/file':>11}")
    rows = [
        (f"throughput {SENDERS}x{SENDS}, no reader (msg/s, median of {REPEAT})", "throughput",
         True),
        (f"  lost messages (all {REPEAT} runs)", "lost", None),
        ("latency p50 (ms, 200 sends to a waiting reader)", "p50", False),
        ("latency p99 (ms)", "p99", False),
        (f"claims {CLAIMERS} procs x {TASKS_EACH} tasks (claims/s)", "claims", True),
        (f"  tasks claimed (of {CLAIMERS * TASKS_EACH})", "claimed", None),
        ("send cost, empty mailbox (ms, median)", "cost0", False),
        ("send cost, 10,000 unread (ms, median)", "cost10k", False),
    ]
    for title, key, higher_better in rows:
        a, b = file[key], red[key]
        ratio = "" if higher_better is None or not a else (
            f"{a / b:.2f}x slower" if higher_better and b < a else
            f"{b / a:.2f}x slower" if not higher_better and b > a else "faster")
        print(f"{title:52} {a:10.2f} {b:10.2f} {ratio:>11}")
    if far_row:
        rtt = far_row["rtt"]
        print(f"\nRedis on a second host: {args.rtt_ms:g} ms added per round trip (delaying "
              "proxy on another loopback port)")
        print(f"  round trip (PING, median): {rtt:.2f} ms -> floor {1000 / rtt:.0f} "
              "requests/s")
        print(f"  one send from a handle in a loop: {far_row['send']:.2f} ms median = "
              f"{far_row['send'] / rtt:.2f} round trips -> {1000 / far_row['send']:.0f} sends/s "
              f"({rtt / far_row['send']:.2f} of the floor; mean {far_row['mean']:.2f} ms)")
        print(f"  open the team + one send (`swarm send`): {far_row['open_send']:.2f} ms "
              f"= {far_row['open_send'] / rtt:.2f} round trips")
        print(f"  throughput {SENDERS}x{SENDS}: {far_row['throughput']:.0f} msg/s, "
              f"{far_row['lost']:.0f} lost")
    print(f"\nfinished in {time.monotonic() - began:.0f} s")
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
