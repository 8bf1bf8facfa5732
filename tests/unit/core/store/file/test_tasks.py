"""The shared task list (docs/design/decisions.md): ids, blocking, claims, releases, corruption."""

from __future__ import annotations

import pytest

from swarm.core.records.task import MAX_DESCRIPTION_BYTES, MAX_SUBJECT_BYTES
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.errors import (
    BadInputError,
    NotFoundError,
    TaskConflictError,
    TooLargeError,
    UnknownRecipientError,
)


def task_files(team: Team) -> list[str]:
    return sorted(p.name for p in paths.tasks_dir(team.name).iterdir())


# -- ids ----------------------------------------------------------------------------------------
def test_add_assigns_increasing_ids_and_fields(team: Team) -> None:
    first = team.tasks.add("write docs", description="all of them")
    second = team.tasks.add("test")
    assert (first.id, second.id) == ("1", "2")
    got = team.tasks.get("1")
    assert got.subject == "write docs" and got.description == "all of them"
    assert got.status == "pending" and got.owner is None
    assert got.created_at.endswith("Z") and got.updated_at.endswith("Z")
    assert [t.id for t in team.tasks.list()] == ["1", "2"]
    assert paths.tasks_highwater(team.name).read_text() == "2"
    for name in task_files(team):
        mode = (paths.tasks_dir(team.name) / name).stat().st_mode & 0o777
        assert mode == 0o600, name


def test_list_is_in_numeric_order(team: Team) -> None:
    for i in range(12):
        team.tasks.add(f"t{i}")
    assert [t.id for t in team.tasks.list()] == [str(i) for i in range(1, 13)]


def test_ids_are_never_reused_after_a_delete(team: Team) -> None:
    for subject in ("a", "b", "c"):
        team.tasks.add(subject)
    paths.task_file(team.name, "3").unlink()
    assert team.tasks.add("d").id == "4"
    paths.task_file(team.name, "4").unlink()
    paths.task_file(team.name, "2").unlink()
    assert team.tasks.add("e").id == "5"


def test_a_lost_or_damaged_high_water_mark_does_not_reuse_ids(team: Team) -> None:
    for subject in ("a", "b", "c"):
        team.tasks.add(subject)
    paths.tasks_highwater(team.name).unlink()
    assert team.tasks.add("d").id == "4"
    paths.tasks_highwater(team.name).write_text("garbage")
    assert team.tasks.add("e").id == "5"


def test_a_failed_add_does_not_burn_or_write_anything(team: Team) -> None:
    team.tasks.add("a")
    before = task_files(team)
    with pytest.raises(NotFoundError):
        team.tasks.add("b", blocked_by=["99"])
    with pytest.raises(BadInputError):
        team.tasks.add("   ")
    with pytest.raises(UnknownRecipientError):
        team.tasks.add("c", owner="mallory")
    assert task_files(team) == before
    assert team.tasks.add("d").id == "2"


def test_text_fields_have_size_limits_and_nothing_is_written(team: Team) -> None:
    big_subject, big_text = "s" * (MAX_SUBJECT_BYTES + 1), "d" * (MAX_DESCRIPTION_BYTES + 1)
    for kwargs in ({"subject": big_subject}, {"subject": "ok", "description": big_text},
                   {"subject": "ok", "active_form": big_subject}):
        with pytest.raises(TooLargeError) as info:
            team.tasks.add(**kwargs)
        assert info.value.exit_code == 2 and "the limit is" in str(info.value)
    assert task_files(team) == []
    task = team.tasks.add("é" * (MAX_SUBJECT_BYTES // 2), description="d" * MAX_DESCRIPTION_BYTES)
    for field, value in (("subject", big_subject), ("description", big_text),
                         ("result", big_text), ("active_form", big_subject)):
        with pytest.raises(TooLargeError) as info:
            team.tasks.update(task.id, **{field: value})
        assert f"task {field} is" in str(info.value)
    assert team.tasks.get(task.id) == task


def test_owner_names_are_checked_and_lower_cased(team: Team) -> None:
    assert team.tasks.add("a", owner="ALICE").owner == "alice"


# -- blocking ------------------------------------------------------------------------------------
def test_blocked_by_records_both_directions(team: Team) -> None:
    base = team.tasks.add("base")
    child = team.tasks.add("child", blocked_by=[base.id])
    assert child.blocked_by == ["1"]
    assert team.tasks.get("1").blocks == ["2"]
    assert team.tasks.unfinished_blockers(child) == ["1"]
    assert not team.tasks.is_available(child)


def test_claim_refused_while_blocked_then_allowed(team: Team) -> None:
    base = team.tasks.add("base")
    child = team.tasks.add("child", blocked_by=[base.id])
    with pytest.raises(TaskConflictError) as info:
        team.tasks.claim(child.id, "alice")
    assert "blocked" in str(info.value) and "#1" in str(info.value)
    assert info.value.exit_code == 1
    after = team.tasks.get(child.id)
    assert after.owner is None and after.status == "pending"  # nothing half-done
    team.tasks.update(base.id, status="completed")
    claimed = team.tasks.claim(child.id, "alice")
    assert claimed.owner == "alice" and claimed.status == "in_progress"


def test_update_to_in_progress_is_refused_while_blocked(team: Team) -> None:
    base = team.tasks.add("base")
    child = team.tasks.add("child", blocked_by=[base.id])
    with pytest.raises(TaskConflictError) as info:
        team.tasks.update(child.id, status="in_progress", owner="bob")
    assert "blocked" in str(info.value)
    after = team.tasks.get(child.id)
    assert after.status == "pending" and after.owner is None  # the owner change was not applied
    # Other moves are allowed while blocked.
    assert team.tasks.update(child.id, owner="bob").owner == "bob"
    team.tasks.update(base.id, status="in_progress")
    team.tasks.update(base.id, status="completed", result="done")
    assert team.tasks.update(child.id, status="in_progress").status == "in_progress"
    assert team.tasks.get(base.id).result == "done"


def test_a_deleted_blocker_keeps_its_dependent_blocked(team: Team) -> None:
    # A blocker that cannot be read is not completed (tests/unit/core/store/test_task_blockers.py).
    base = team.tasks.add("base")
    child = team.tasks.add("child", blocked_by=[base.id])
    paths.task_file(team.name, base.id).unlink()
    with pytest.raises(TaskConflictError, match="blocked by"):
        team.tasks.claim(child.id, "alice")


# -- claims -------------------------------------------------------------------------------------
def test_claim_refusal_reasons(team: Team) -> None:
    owned = team.tasks.add("owned")
    done = team.tasks.add("done")
    team.tasks.claim(owned.id, "alice")
    with pytest.raises(TaskConflictError, match="already owned by alice"):
        team.tasks.claim(owned.id, "bob")
    team.tasks.update(done.id, status="completed")
    with pytest.raises(TaskConflictError, match="already completed"):
        team.tasks.claim(done.id, "bob")
    assert team.tasks.get(owned.id).owner == "alice"
    assert team.tasks.get(done.id).status == "completed" and team.tasks.get(done.id).owner is None


def test_claim_is_idempotent_for_the_owner_and_honours_assignment(team: Team) -> None:
    assigned = team.tasks.add("for bob", owner="bob")
    with pytest.raises(TaskConflictError, match="owned by bob"):
        team.tasks.claim(assigned.id, "alice")
    assert team.tasks.claim(assigned.id, "bob").status == "in_progress"
    assert team.tasks.claim(assigned.id, "BOB").owner == "bob"


def test_claim_errors_for_unknown_task_or_member(team: Team) -> None:
    team.tasks.add("a")
    for bad in ("99", "../1", "", "1.json"):
        with pytest.raises(NotFoundError):
            team.tasks.claim(bad, "alice")
    with pytest.raises(UnknownRecipientError):
        team.tasks.claim("1", "mallory")
    assert team.tasks.get("1").owner is None


def test_claim_next_takes_the_lowest_available(team: Team) -> None:
    first = team.tasks.add("first")
    team.tasks.add("blocked", blocked_by=[first.id])
    team.tasks.add("bobs", owner="bob")
    team.tasks.add("free")
    got = team.tasks.claim_next("alice")
    assert got is not None and got.id == "1"
    got = team.tasks.claim_next("alice")
    assert got is not None and got.id == "4"  # 2 is blocked, 3 belongs to bob
    assert team.tasks.claim_next("alice") is None
    bobs = team.tasks.claim_next("bob")
    assert bobs is not None and bobs.id == "3"


# -- release ------------------------------------------------------------------------------------
def test_release(team: Team) -> None:
    task = team.tasks.add("a")
    team.tasks.claim(task.id, "alice")
    released = team.tasks.release(task.id)
    assert released.owner is None and released.status == "pending"
    assert team.tasks.claim(task.id, "bob").owner == "bob"
    team.tasks.update(task.id, status="completed")
    kept = team.tasks.release(task.id)
    assert kept.status == "completed" and kept.owner is None
    with pytest.raises(NotFoundError):
        team.tasks.release("42")


def test_release_owned_by(team: Team) -> None:
    a, b, c, d = (team.tasks.add(s) for s in "abcd")
    team.tasks.claim(a.id, "alice")
    team.tasks.claim(b.id, "alice")
    team.tasks.claim(c.id, "bob")
    team.tasks.claim(d.id, "alice")
    team.tasks.update(d.id, status="completed")
    released = team.tasks.release_owned_by("alice")
    assert sorted(t.id for t in released) == [a.id, b.id]
    by_id = {t.id: t for t in team.tasks.list()}
    assert by_id[a.id].owner is None and by_id[a.id].status == "pending"
    assert by_id[c.id].owner == "bob" and by_id[c.id].status == "in_progress"
    assert by_id[d.id].owner == "alice" and by_id[d.id].status == "completed"
    assert team.tasks.release_owned_by("nobody") == []


def test_release_owned_by_without_a_task_dir() -> None:
    team = Team.create("empty")
    paths.tasks_dir(team.name).rmdir()
    assert team.tasks.release_owned_by("alice") == []
    assert team.tasks.list() == []


# -- update -------------------------------------------------------------------------------------
def test_update_fields_and_errors(team: Team) -> None:
    task = team.tasks.add("a")
    changed = team.tasks.update(task.id, subject="b", description="d", active_form="doing b",
                                result="r", owner="alice")
    assert (changed.subject, changed.description, changed.active_form, changed.result,
            changed.owner) == ("b", "d", "doing b", "r", "alice")
    assert team.tasks.update(task.id, owner=None).owner is None
    with pytest.raises(BadInputError, match="invalid status"):
        team.tasks.update(task.id, status="done")
    with pytest.raises(UnknownRecipientError):
        team.tasks.update(task.id, owner="mallory")
    with pytest.raises(NotFoundError):
        team.tasks.update("7", status="completed")
    assert team.tasks.get(task.id).status == "pending"


# -- corruption ---------------------------------------------------------------------------------
def test_corrupt_task_file_is_moved_aside_and_the_list_goes_on(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    for subject in ("a", "b", "c"):
        team.tasks.add(subject)
    broken = paths.task_file(team.name, "2")
    broken.write_bytes(b'{"id": "2", "subject": "b", "sta')
    assert [t.id for t in team.tasks.list()] == ["1", "3"]
    err = capsys.readouterr().err
    assert err.startswith("swarm: warning:") and "2.json" in err and "Traceback" not in err
    [aside] = list(broken.parent.glob("2.json.corrupt-*"))
    assert aside.read_bytes().startswith(b'{"id": "2"')
    with pytest.raises(NotFoundError):
        team.tasks.get("2")
    assert team.tasks.add("d").id == "4"
    assert [t.id for t in team.tasks.list()] == ["1", "3", "4"]


def test_quarantined_highest_task_id_is_not_reused(team: Team) -> None:
    team.tasks.add("a")
    team.tasks.add("b")
    paths.task_file(team.name, "2").write_text("not json")
    paths.tasks_highwater(team.name).unlink()
    assert [t.id for t in team.tasks.list()] == ["1"]  # moves 2 aside
    assert team.tasks.add("c").id == "3"


def test_task_with_an_invalid_status_on_disk_is_quarantined(team: Team) -> None:
    team.tasks.add("a")
    path = paths.task_file(team.name, "1")
    path.write_text(path.read_text().replace('"pending"', '"exploded"'))
    assert team.tasks.list() == []
    assert len(list(path.parent.glob("1.json.corrupt-*"))) == 1


def test_a_failed_task_is_not_claimed_not_released_and_goes_back_to_pending_by_hand(
        team: Team) -> None:
    task = team.tasks.add("flaky")
    team.tasks.claim(task.id, "alice")
    team.tasks.update(task.id, status="failed", result="exit code 2")
    with pytest.raises(TaskConflictError, match="failed; the lead sets it back to pending"):
        team.tasks.claim(task.id, "bob")
    assert team.tasks.claim_next("bob") is None
    assert team.tasks.release_owned_by("alice") == []  # a failed task is not work to give back
    assert team.tasks.get(task.id).status == "failed"
    team.tasks.update(task.id, status="pending", owner=None)
    assert team.tasks.claim(task.id, "bob").status == "in_progress"
