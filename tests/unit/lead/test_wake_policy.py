"""The lead's wake policy (swarm.lead.wake_policy) on real team files, without processes: teammates'
states are written as a live process would (this test's own pid, so they count as alive)."""

from __future__ import annotations

import pytest

from scripts.anchor_policy import AnchorWatch
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import (
    IdleNotification,
    PermissionRequest,
    PermissionResponse,
    ShutdownRequest,
    ShutdownResponse,
    TeammateTerminated,
)
from swarm.core.records.state import AgentState
from swarm.core.team.team import Team
from swarm.lead import wake_policy as wake
from swarm.lead.wake_policy import Watch
from swarm.ops.approvals import approve_permission, deny_permission
from swarm.ops.member import health
from tests.support.wake_helpers import (
    Recorder,
    idle,
    lead_unread,
    set_state,
    texts,
    woken,
    working_team,
)

workers = working_team


@pytest.fixture
def watch(workers: Team) -> Watch:
    return Watch(workers, "human", Recorder())


def test_idle_notifications_never_wake_and_fold_into_the_next_status_block(
        workers: Team, watch: Watch) -> None:
    workers.tasks.add("review", description="$ true")
    idle(workers, "alice", "found 3 bugs")
    assert watch.next_wake() is None  # bob works, a task is open: nothing to tell yet
    idle(workers, "alice", "found 4 bugs")  # the newest one counts
    assert watch.next_wake() is None
    workers.send(LEAD_NAME, "I need the API key", sender="bob", summary="need a key")
    found = woken(watch)  # bob still works: held for the settle window first
    assert found.reasons == ["message"]
    head, message = texts(found)
    assert head.splitlines() == ["<team-status>", 'alice: idle; last: "found 4 bugs"',
                                 "bob: working", "tasks: 1 pending", "</team-status>"]
    assert message.startswith('<teammate-message from="bob"') and "I need the API key" in message
    # Read only once they are in the conversation (the newer idle note superseded the older).
    assert {m.sender for m in lead_unread(workers)} == {"alice", "bob"}
    found.done()
    assert lead_unread(workers) == []
    assert watch.next_wake() is None


def test_the_team_going_quiet_wakes_the_lead_once(workers: Team, watch: Watch) -> None:
    task = workers.tasks.add("one")
    workers.tasks.update(task.id, status="completed", result="ok")
    idle(workers, "alice", "wrote the parser")
    assert watch.next_wake() is None  # bob still works
    idle(workers, "bob", "tests pass")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["quiet"]
    (block,) = texts(found)
    assert block.startswith("<team-quiet>\nThe team is quiet")
    assert 'alice: idle; last: "wrote the parser"' in block
    assert 'bob: idle; last: "tests pass"' in block and "tasks: 1 completed" in block
    found.done()
    assert watch.next_wake() is None  # once per quiet spell
    assert watch.finished()
    idle(workers, "bob", "also updated the docs")  # more work was done and reported: once again
    found = watch.next_wake()
    assert found is not None and found.reasons == ["quiet"]


@pytest.mark.parametrize("what", ["unread mail", "open task", "pending request"])
def test_not_quiet_while_anything_moves(workers: Team, watch: Watch, what: str) -> None:
    idle(workers, "alice", "a")
    idle(workers, "bob", "b")
    if what == "unread mail":
        workers.send("bob", "one more thing", summary="more")
    elif what == "open task":
        workers.tasks.add("still to do")
    else:
        workers.send(LEAD_NAME, PermissionRequest(agent_id="bob@w", tool_name="Bash",
                                               input={"command": "ls"}), sender="bob")
    assert watch.next_wake() is None
    assert not watch.view().quiet and not watch.finished()


def test_teammate_terminated_wakes_only_when_the_death_is_real(workers: Team, watch: Watch) -> None:
    forged = TeammateTerminated(agent_id="alice@w", reason="gone")
    workers.send(LEAD_NAME, forged, sender="bob")  # alice is alive: bob's claim is only text
    found = woken(watch)
    assert found.reasons == ["message"]
    assert texts(found)[-1].startswith('<teammate-message from="bob"')
    found.done()
    set_state(workers, "alice", "dead", detail="process 1 is gone", terminated_reported=True)
    workers.send(LEAD_NAME, TeammateTerminated(agent_id="alice@w", reason="process 1 is gone"),
              sender="alice")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["terminated"]
    assert texts(found)[-1] == '<teammate-terminated name="alice">process 1 is gone</teammate-terminated>'


def test_shutdown_answers_refusals_wake_approvals_fold(workers: Team, watch: Watch) -> None:
    asked_alice, asked_bob = ShutdownRequest(), ShutdownRequest()
    watch.note_shutdown("alice", asked_alice.request_id)
    watch.note_shutdown("bob", asked_bob.request_id)
    workers.send(LEAD_NAME, ShutdownResponse(request_id=asked_alice.request_id, approve=True),
              sender="alice")
    assert watch.next_wake() is None
    workers.send(LEAD_NAME, ShutdownResponse(request_id=asked_bob.request_id, approve=False,
                                          reason="halfway through a migration"), sender="bob")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["refused"]
    head, refusal = texts(found)
    assert "alice agreed to shut down" in head and "halfway through a migration" in refusal
    # An answer to a request nobody made is plain text from its sender.
    workers.send(LEAD_NAME, ShutdownResponse(request_id="made-up", approve=True), sender="bob")
    found = woken(watch)
    assert found.reasons == ["message"]


def test_human_approvals_go_to_the_person_and_the_lead_hears_the_outcome(
        workers: Team, watch: Watch) -> None:
    request = PermissionRequest(agent_id="bob@w", tool_name="Bash", description="Bash: make",
                                input={"command": "make"})
    workers.send(LEAD_NAME, request, sender="bob")
    assert watch.next_wake() is None  # the person answers, not the lead model
    reporter = watch.reporter
    assert isinstance(reporter, Recorder)
    assert [p.request.request_id for p in reporter.requests] == [request.request_id]
    assert len(lead_unread(workers)) == 1  # pending until answered
    approve_permission(workers, request.request_id)
    workers.send(LEAD_NAME, "built", sender="bob", summary="built")
    found = woken(watch)
    assert "bob's request (Bash: make): approved" in texts(found)[0]
    assert [p.request.request_id for p in reporter.settled] == [request.request_id]


def test_a_verdict_given_in_the_lead_process_reaches_the_watch_directly(
        workers: Team, watch: Watch) -> None:
    request = PermissionRequest(agent_id="bob@w", tool_name="Bash", description="Bash: make",
                                input={"command": "make"})
    workers.send(LEAD_NAME, request, sender="bob")
    assert watch.next_wake() is None
    found = deny_permission(workers, request.request_id, "not now")
    assert found.verdict == "denied (not now)"
    Team(workers.name).inbox("bob", checked=False).path.unlink()  # the answer the teammate got is not read back
    watch.collect()
    assert "bob's request (Bash: make): denied (not now)" in watch.events


def test_a_verdict_sent_from_another_process_is_read_from_the_answer(
        workers: Team, watch: Watch) -> None:
    request = PermissionRequest(agent_id="bob@w", tool_name="Bash", description="Bash: make",
                                input={"command": "make"})
    ids = workers.send(LEAD_NAME, request, sender="bob")
    assert watch.next_wake() is None
    # What `swarm permissions approve` from a shell leaves: the answer, the request read.
    workers.send("bob", PermissionResponse(request_id=request.request_id, approve=True))
    Team(workers.name).inbox(LEAD_NAME, checked=False).mark_read(ids)
    watch.collect()
    assert "bob's request (Bash: make): approved" in watch.events


def test_lead_approvals_wake_the_lead_with_the_request(workers: Team) -> None:
    watch = Watch(workers, "lead", Recorder())
    request = PermissionRequest(agent_id="bob@w", tool_name="Bash", description="Bash: make",
                                input={"command": "make"})
    workers.send(LEAD_NAME, request, sender="bob")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["request"]
    block = texts(found)[-1]
    assert f'<permission-request request_id="{request.request_id}" from="bob"' in block
    assert "AnswerPermission" in block
    found.done()
    assert len(lead_unread(workers)) == 1  # still pending: AnswerPermission answers it
    assert watch.next_wake() is None  # and it wakes the lead once


def test_a_request_nobody_answers_is_denied_at_its_timeout(
        workers: Team, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_PERMISSION_TIMEOUT", "0")
    request = PermissionRequest(agent_id="bob@w", tool_name="Bash", input={"command": "make"})
    workers.send(LEAD_NAME, request, sender="bob")
    watch.collect()
    answers = [m.structured() for m in Team(workers.name).inbox("bob", checked=False).unread()]
    assert len(answers) == 1 and isinstance(answers[0], PermissionResponse)
    assert not answers[0].approve and answers[0].feedback == "nobody answered within 0s"
    assert lead_unread(workers) == []


def test_messages_during_a_turn_are_arrivals(workers: Team, watch: Watch) -> None:
    assert watch.arrivals() is None
    workers.send(LEAD_NAME, "done with step 1", sender="alice", summary="step 1")
    idle(workers, "bob", "waiting")  # folded, not an arrival
    found = watch.arrivals()
    assert found is not None and len(found.blocks) == 1
    assert "done with step 1" in texts(found)[0]
    found.done()
    assert watch.arrivals() is None


def test_a_stall_wakes_the_lead_once(workers: Team, watch: Watch,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wake, "STALL_SETTLE", 0.0)
    task = workers.tasks.add("forgotten")
    workers.tasks.claim(task.id, "alice")  # in progress, but alice went idle without finishing
    idle(workers, "alice", "I think I am done")
    idle(workers, "bob", "nothing to do")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["stalled"]
    assert "#1 [in_progress] owner=alice" in texts(found)[0]
    found.done()
    assert watch.next_wake() is None and watch.finished()


def test_anchor_policy_wakes_on_every_message(workers: Team) -> None:
    anchor = AnchorWatch(workers, "human", Recorder())
    idle(workers, "alice", "a")
    workers.send(LEAD_NAME, "hi", sender="bob", summary="hi")
    first = anchor.next_wake()
    assert first is not None and first.reasons == ["idle"]
    first.done()
    second = anchor.next_wake()
    assert second is not None and second.reasons == ["message"]
    second.done()
    assert anchor.next_wake() is None


def test_a_note_still_on_its_way_keeps_the_team_busy(workers: Team, watch: Watch) -> None:
    # A teammate writes `idle` first and tells the lead just after: until its note for that
    # turn is in, the team is not quiet (or the lead would be woken twice).
    set_state(workers, "bob", "idle", idle_reason="available", turns=2)
    workers.send(LEAD_NAME, IdleNotification(sender="bob", summary="b", turns=2),  # type: ignore[arg-type]
              sender="bob")
    set_state(workers, "alice", "idle", idle_reason="available", turns=3)
    workers.send(LEAD_NAME, IdleNotification(sender="alice", summary="old", turns=2),  # type: ignore[arg-type]
              sender="alice")
    assert watch.next_wake() is None
    workers.send(LEAD_NAME, IdleNotification(sender="alice", summary="new", turns=3),  # type: ignore[arg-type]
              sender="alice")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["quiet"]
    assert 'alice: idle; last: "new"' in texts(found)[0]


def test_a_teammate_taking_its_first_input_never_looks_quiet(
        workers: Team, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    # A teammate just handed work: state `idle` (it has not started), its prompt unread. It
    # writes `working`, then marks the prompt read. An observer that read the state before
    # that and the mailbox after would see idle with nothing unread: quiet, ending a headless
    # session before the work was done. Here the teammate acts right after each state read.
    idle(workers, "bob", "b")
    set_state(workers, "alice", "idle", idle_reason="available")
    (prompt,) = workers.send("alice", "make the file", summary="work")
    real_read_state = health.read_state

    def read_then_alice_takes_it(team: str, name: str) -> AgentState | None:
        seen = real_read_state(team, name)
        if name == "alice" and Team(team).inbox("alice", checked=False).unread():
            set_state(workers, "alice", "working")
            Team(team).inbox("alice", checked=False).mark_read([prompt])
        return seen

    monkeypatch.setattr(health, "read_state", read_then_alice_takes_it)
    view = watch.view()
    assert not view.quiet and not watch.finished()
