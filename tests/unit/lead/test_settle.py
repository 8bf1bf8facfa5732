"""The settle window (swarm.lead.settle): a teammate's report that arrives while others still work
waits for theirs, so a burst of reports is one lead turn; nothing but reports ever waits."""

from __future__ import annotations

import time

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import PermissionRequest, TeammateTerminated
from swarm.core.team.team import Team
from swarm.lead.settle import FIRST_WINDOW, MAX_HOLD, MAX_WINDOW, MIN_WINDOW, PHASE_GAP, Settle
from swarm.lead.wake_policy import Watch
from tests.support.helpers import wait_until
from tests.support.wake_helpers import Recorder, set_state, texts, working_team

workers = working_team


def test_a_burst_of_reports_is_one_wake(workers: Team) -> None:
    watch = Watch(workers, "human", Recorder())
    workers.send(LEAD_NAME, "part A done", sender="alice")
    assert watch.next_wake() is None  # bob still works: his report is coming
    due = watch.look_again_by()
    assert due is not None and due <= time.monotonic() + MAX_WINDOW
    workers.send(LEAD_NAME, "part B done", sender="bob")
    found = wait_until(watch.next_wake, 5 + MAX_HOLD, message="the held reports")
    assert found.reasons == ["message", "message"]
    said = "\n".join(texts(found))
    assert "part A done" in said and "part B done" in said
    found.done()
    assert watch.look_again_by() is None and watch.next_wake() is None


def test_a_report_wakes_at_once_when_nobody_works(workers: Team) -> None:
    watch = Watch(workers, "human", Recorder())
    set_state(workers, "alice", "idle", idle_reason="available")
    set_state(workers, "bob", "idle", idle_reason="available")
    workers.tasks.add("still open")  # not quiet: only the report wakes it
    workers.send(LEAD_NAME, "done, and a question", sender="alice")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["message"]


@pytest.mark.parametrize("what", ["request", "death"])
def test_a_request_or_a_death_is_never_held_and_takes_the_held_reports_along(
        workers: Team, what: str) -> None:
    watch = Watch(workers, "lead", Recorder())
    workers.send(LEAD_NAME, "part A done", sender="alice")
    assert watch.next_wake() is None
    if what == "request":
        workers.send(LEAD_NAME, PermissionRequest(agent_id="bob@w", tool_name="Bash",
                                               input={"command": "make"}), sender="bob")
    else:
        set_state(workers, "bob", "dead", detail="killed", terminated_reported=True)
        workers.send(LEAD_NAME, TeammateTerminated(agent_id="bob@w", reason="killed"), sender="bob")
    found = watch.next_wake()
    assert found is not None
    assert sorted(found.reasons) == sorted(["message", "request" if what == "request"
                                            else "terminated"])
    assert "part A done" in "\n".join(texts(found))


def test_the_window_is_measured_from_the_teams_own_spacing() -> None:
    settle = Settle()
    assert settle.window() == FIRST_WINDOW
    for at in (0.0, 0.1, 0.2, 0.3):
        settle.arrived(at)
    assert settle.window() == MIN_WINDOW  # 2 x 0.1 s, raised to the floor
    spaced = Settle()
    for at in (0.0, 0.6, 1.2):
        spaced.arrived(at)
    assert spaced.window() == pytest.approx(1.2)
    slow = Settle()
    for at in (0.0, 1.5, 3.0, 3.0 + PHASE_GAP + 1):  # the last gap is another phase
        slow.arrived(at)
    assert slow.window() == MAX_WINDOW  # 2 x 1.5 s, capped


def test_a_held_report_waits_at_most_max_hold_however_reports_keep_coming() -> None:
    settle = Settle()
    now = 100.0
    settle.arrived(now)
    assert settle.hold(True, now)
    while now < 100.0 + MAX_HOLD:  # a report every 0.5 s keeps sliding the window...
        now += 0.5
        settle.arrived(now)
        if not settle.hold(True, now):
            break
    assert now <= 100.0 + MAX_HOLD + 0.5  # ...but the oldest never waits past MAX_HOLD
    assert not settle.hold(False, now) and settle.until is None
