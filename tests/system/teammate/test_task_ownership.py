"""Task ownership: a task owned by a member changes owner or status only by
that owner or the lead (or a person's shell); anyone else gets an error. So a file scope lasts
while its task is owned: a peer cannot lift it by taking the task away. Claiming an unowned task
stays allowed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.team import Team
from swarm.errors import NotAllowedError, TaskConflictError
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until

REFUSED = "task #1 is owned by alice: only alice or the lead may change its owner or status"


def test_only_the_owner_or_the_lead_moves_an_owned_task(team: Team) -> None:
    team.tasks.add("one", owner="alice")
    team.tasks.add("two")
    tasks = team.tasks
    for change in ({"owner": None}, {"owner": "bob"}, {"status": "completed"},
                   {"status": "in_progress"}):
        with pytest.raises(NotAllowedError) as refused:
            tasks.update("1", actor="bob", **change)  # type: ignore[arg-type]
        assert str(refused.value) == REFUSED
    with pytest.raises(NotAllowedError):
        tasks.release("1", actor="bob")
    with pytest.raises(NotAllowedError):
        tasks.claim("1", "alice", actor="bob")  # moving it to in_progress for its owner
    with pytest.raises(TaskConflictError):
        tasks.claim("1", "bob", actor="bob")
    assert tasks.get("1").owner == "alice" and tasks.get("1").status == "pending"
    # Other fields are not guarded; an unchanged owner or status is no change.
    assert tasks.update("1", actor="bob", result="a note", owner="alice").result == "a note"

    # The owner, the lead and a person (no actor) may.
    assert tasks.update("1", actor="alice", status="in_progress").status == "in_progress"
    assert tasks.update("1", actor=LEAD_NAME, owner="bob").owner == "bob"
    assert tasks.update("1", owner="alice").owner == "alice"
    assert tasks.release("1", actor="alice").owner is None
    # Unowned: anyone may claim it (and then it is theirs).
    assert tasks.claim("2", "bob", actor="bob").owner == "bob"
    assert tasks.update("1", actor="bob", owner="bob").owner == "bob"


def script(path: Path, turns: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def results(crew: Crew, name: str) -> list[dict[str, Any]]:
    return [b for e in crew.transcript(name) if e.get("kind") == "message"
            for b in e["message"]["content"] if isinstance(b, dict)
            and b.get("type") == "tool_result"]


def test_a_teammate_cannot_lift_anothers_scope_by_taking_its_task(crew: Crew,
                                                                   tmp_path: Path) -> None:
    (crew.workdir / "src").mkdir()
    crew.team.tasks.add("api", description="$ sleep 30", files=["src/**"])
    crew.spawn("alice")  # idle: claims task #1 and works on it (its `sleep`)
    wait_until(lambda: crew.team.tasks.get("1").owner == "alice"
               and crew.team.tasks.get("1").status == "in_progress", 15,
               message=f"alice on task #1 ({crew.log('alice')[-400:]})")
    crew.spawn("bob", prompt="go", model=script(tmp_path / "bob.json", [
        {"tool_uses": [
            {"name": "TaskUpdate", "input": {"task_id": "1", "owner": ""}},
            {"name": "Write", "input": {"file_path": "src/evil.txt", "content": "x"}},
            {"name": "TaskUpdate", "input": {"task_id": "1", "status": "completed"}}]},
        {"text": "done"}]))
    crew.wait_idle_notes("bob", 1)
    taken, wrote, completed = results(crew, "bob")[:3]
    assert taken.get("is_error") and taken["content"] == REFUSED
    assert wrote.get("is_error") and "inside the file scope 'src/**' of task #1" in wrote["content"]
    assert completed.get("is_error") and completed["content"] == REFUSED
    assert not (crew.workdir / "src" / "evil.txt").exists()
    task = crew.team.tasks.get("1")
    assert (task.owner, task.status) == ("alice", "in_progress")


def test_a_teammates_shell_cannot_move_anothers_task(crew: Crew) -> None:
    crew.team.add_member("alice", cwd=str(crew.workdir))
    crew.team.tasks.add("mine", owner="alice")
    crew.team.tasks.add("free")
    commands = [
        f"{SWARM} tasks update 1 --owner ''",
        f"{SWARM} tasks update 1 --status completed",
        f"{SWARM} tasks release 1",
        f"env -u SWARM_AGENT_ID {SWARM} tasks update 1 --owner bob",
        f"{SWARM} tasks claim 2 --as bob",
    ]
    crew.spawn("bob", prompt="\n".join(f"$ {c}; echo exit=$?" for c in commands))
    crew.wait_idle_notes("bob", 1)
    report = next(m.text for m in crew.lead_messages() if m.sender == "bob"
                  and not m.structured())
    assert report.count("exit=2") == 4 and report.count("exit=0") == 1, report
    assert report.count(f"swarm: error: {REFUSED}") == 4, report
    assert crew.team.tasks.get("1").owner == "alice"
    assert crew.team.tasks.get("2").owner == "bob"
    # A person's shell (and the lead) may (to a member not running: bob would claim it if free).
    crew.team.add_member("carol", cwd=str(crew.workdir))
    person = crew.cli("tasks", "update", "1", "--owner", "carol")
    assert person.returncode == 0, person.stderr
    assert crew.team.tasks.get("1").owner == "carol"
