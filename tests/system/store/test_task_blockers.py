"""A task whose blocker cannot be read stays blocked: a blocker whose file or
Redis entry is corrupt, missing, or not a task is not "completed", so its dependents are never
claimed, started or offered, on both stores (the file store and a real redis-server).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from swarm.core.store import paths
from swarm.core.store.redis.tasks import RedisTaskList
from swarm.core.team.team import Team
from swarm.errors import TaskConflictError
from tests.support.helpers import run_cli


def damage(team: Team, task_id: str, raw: bytes | None) -> None:
    """Replace a task's stored bytes (None: remove it), as a crash or a hand edit would."""
    tasks = team.tasks
    if isinstance(tasks, RedisTaskList):
        client = tasks.connection.client
        if raw is None:
            client.hdel(tasks.hash, task_id)
        else:
            client.hset(tasks.hash, task_id, raw)
        return
    path = paths.task_file(team.name, task_id)
    if raw is None:
        path.unlink()
    else:
        path.write_bytes(raw)


DAMAGES: dict[str, bytes | None] = {
    "corrupt": b'{"id": "1", "subject": "blocker", "status": "comp',
    "garbage": b"\x00\xff not json",
    "missing": None,
    "not-a-task": b'{"status": "completed"}',
    "another-task": b'{"id": "9", "subject": "x", "status": "completed"}',
}


@pytest.mark.parametrize("how", list(DAMAGES))
def test_a_task_whose_blocker_is_unreadable_stays_blocked(
        store: str, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    team = Team.create("blocky")
    team.add_member("alice")
    team.tasks.add("blocker")
    team.tasks.add("dependent", blocked_by=["1"])
    damage(team, "1", DAMAGES[how])

    (dependent,) = [t for t in team.tasks.list() if t.id == "2"]
    assert not team.tasks.is_available(dependent, "alice")
    assert team.tasks.claim_next("alice") is None
    claims: list[Callable[[], object]] = [
        lambda: team.tasks.claim("2", "alice"),
        lambda: team.tasks.update("2", status="in_progress"),
    ]
    for claim in claims:
        with pytest.raises(TaskConflictError, match="blocked by"):
            claim()
    code, _, err = run_cli(capsys, "tasks", "claim", "2", "--team", "blocky", "--as", "alice")
    assert code != 0 and "blocked by" in err, err
    assert team.tasks.get("2").status == "pending" and team.tasks.get("2").owner is None


def test_a_completed_blocker_still_unblocks(store: str) -> None:
    team = Team.create("blocky")
    team.add_member("alice")
    team.tasks.add("blocker")
    team.tasks.add("dependent", blocked_by=["1"])
    team.tasks.update("1", status="completed")
    claimed = team.tasks.claim_next("alice")
    assert claimed is not None and claimed.id == "2"
