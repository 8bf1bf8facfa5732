"""The shared task list under forked processes: concurrent adds get unique ids, and of eight
processes claiming one task exactly one wins (in-process: tests/unit/core/store/file/test_tasks.py)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
from multiprocessing.queues import Queue

from swarm.core.team.team import Team
from swarm.errors import (
    TaskConflictError,
)

FORK = multiprocessing.get_context("fork")


def test_concurrent_adds_get_unique_ids(team: Team) -> None:
    def adder(team_name: str, tag: int) -> None:
        tasks = Team.open(team_name).tasks
        for i in range(10):
            tasks.add(f"p{tag}-{i}")

    procs = [FORK.Process(target=adder, args=(team.name, tag)) for tag in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    listed = team.tasks.list()
    assert [t.id for t in listed] == [str(i) for i in range(1, 41)]
    assert sorted(t.subject for t in listed) == sorted(
        f"p{tag}-{i}" for tag in range(4) for i in range(10)
    )


def _claimer(team_name: str, name: str, barrier: multiprocessing.synchronize.Barrier,
             results: Queue[tuple[str, str, str]]) -> None:
    tasks = Team.open(team_name).tasks
    barrier.wait()
    try:
        task = tasks.claim("1", name)
        results.put((name, "won", task.owner or ""))
    except TaskConflictError as exc:
        results.put((name, "refused", str(exc)))
    except Exception as exc:  # anything else is a failure the test must show
        results.put((name, "error", repr(exc)))


def test_eight_processes_claim_one_task_exactly_one_wins(team: Team) -> None:
    names = [f"w{i}" for i in range(8)]
    for name in names:
        team.add_member(name)
    team.tasks.add("contested")
    barrier = FORK.Barrier(8)
    results: Queue[tuple[str, str, str]] = FORK.Queue()
    procs = [FORK.Process(target=_claimer, args=(team.name, n, barrier, results)) for n in names]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0
    winners = [o for o in outcomes if o[1] == "won"]
    refused = [o for o in outcomes if o[1] == "refused"]
    assert len(winners) == 1, outcomes
    assert len(refused) == 7, outcomes
    winner = winners[0][0]
    assert all(f"already owned by {winner}" in o[2] for o in refused)
    task = team.tasks.get("1")
    assert task.owner == winner and task.status == "in_progress"
