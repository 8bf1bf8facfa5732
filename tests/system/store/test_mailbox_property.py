"""Property: interleaved sends (several processes), reads, mark_read and compactions never
lose a message, duplicate one as new, or corrupt one."""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.synchronize
from multiprocessing.queues import Queue
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarm.core.records import base as records
from swarm.core.store.api import Mailbox
from swarm.core.store.file.mailbox import FileMailbox
from swarm.core.team.team import Team

FORK = multiprocessing.get_context("fork")

# What the reading process does, in order, while the writers send. The last field picks one of
# two handles on the same mailbox: each keeps its own parse of the file, and must notice what
# the other rewrote.
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("read"), st.booleans(), st.booleans()),  # (op, include_archive, handle)
        st.tuples(st.just("mark"), st.lists(st.integers(0, 50), max_size=6), st.booleans(),
                  st.booleans()),
        st.tuples(st.just("compact"), st.booleans()),
        st.tuples(st.just("wait"), st.booleans()),
    ),
    max_size=25,
)
# Per writer: the texts it sends (any unicode, control characters included).
PLANS = st.lists(st.lists(st.text(max_size=30), max_size=12), min_size=1, max_size=3)


def _writer(team_name: str, index: int, texts: list[str],
            barrier: multiprocessing.synchronize.Barrier, out: Queue[tuple[int, list[str]]]) -> None:
    team = Team.open(team_name)
    barrier.wait()
    ids = []
    for number, text in enumerate(texts):
        [sent] = team.send("reader", f"w{index}:{number}:{text}", sender=f"w{index}")
        ids.append(sent)
    out.put((index, ids))


def _raw_archive(box: Mailbox) -> list[dict[str, Any]]:
    if not isinstance(box, FileMailbox):  # the Redis store: its history, as the archive file has it
        return [json.loads(records.encode(m)) for m in box.archived()]
    if not box.archive_path.exists():
        return []
    return [json.loads(line) for line in box.archive_path.read_bytes().splitlines() if line]


def _check_snapshot(box: Mailbox, include_archive: bool) -> None:
    seen = box.messages(include_archive=include_archive)
    ids = [m.id for m in seen]
    assert len(ids) == len(set(ids)), "a message appears twice in one read"


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plans=PLANS, ops=OPS)
def test_interleaved_mailbox_operations_lose_and_duplicate_nothing(
    store: str, plans: list[list[str]], ops: list[tuple[Any, ...]]
) -> None:
    team = Team.create("prop")  # a fresh team per example (a unique name on a clash)
    team.add_member("reader")
    for index in range(len(plans)):
        team.add_member(f"w{index}")
    box = team.inbox("reader")
    handles = [box, team.inbox("reader", checked=False)]

    barrier = FORK.Barrier(len(plans) + 1)
    results: Queue[tuple[int, list[str]]] = FORK.Queue()
    writers = [FORK.Process(target=_writer, args=(team.name, i, texts, barrier, results))
               for i, texts in enumerate(plans)]
    for proc in writers:
        proc.start()
    barrier.wait()

    marked: set[str] = set()
    for op in ops:
        handle = handles[op[-1]]
        if op[0] == "read":
            _check_snapshot(handle, include_archive=op[1])
        elif op[0] == "mark":
            unread = handle.unread()
            if unread:
                chosen = {unread[i % len(unread)].id for i in op[1]}
                handle.mark_read(chosen, compact=op[2])
                marked |= chosen
        elif op[0] == "compact":
            handle.compact()
        else:
            handle.wait(timeout=0.005)

    expected: dict[str, tuple[str, str]] = {}  # id -> (sender, text)
    for _ in writers:
        index, ids = results.get(timeout=60)
        for number, sent in enumerate(ids):
            expected[sent] = (f"w{index}", f"w{index}:{number}:{plans[index][number]}")
    for proc in writers:
        proc.join(30)
        assert proc.exitcode == 0

    live = box.messages()
    archived = _raw_archive(box)
    live_ids = [m.id for m in live]
    archive_ids = [a["id"] for a in archived]
    # Exactly once: no duplicates anywhere, nothing in both places, nothing unknown or missing.
    assert len(live_ids) == len(set(live_ids))
    assert len(archive_ids) == len(set(archive_ids))
    assert not set(live_ids) & set(archive_ids)
    assert sorted(live_ids + archive_ids) == sorted(expected)
    # Not corrupted: the right sender and text for every id.
    for message in live:
        assert (message.sender, message.text) == expected[message.id]
    for entry in archived:
        assert (entry["from"], entry["text"]) == expected[entry["id"]]
    # Read flags: archived means marked read; live is read exactly when marked.
    assert all(entry["read"] for entry in archived)
    assert set(archive_ids) <= marked
    for message in live:
        assert message.read == (message.id in marked)
    # And the public view agrees with the raw files.
    everything = box.messages(include_archive=True)
    assert sorted(m.id for m in everything) == sorted(expected)
    assert {m.id for m in box.unread()} == set(expected) - marked
