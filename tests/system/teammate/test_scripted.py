"""Real `swarm agent` processes replaying a `scripted:` model: exact behaviours, the input order."""

from __future__ import annotations

import json
from typing import Any

from swarm.core.records.protocol import ShutdownRequest, ShutdownResponse
from swarm.core.store.liveness import is_alive
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.helpers import wait_until


def write_script(crew: Crew, turns: list[dict[str, Any]], name: str = "script.json") -> str:
    path = crew.workdir / name
    path.write_text(json.dumps(turns))
    return f"scripted:{name}"  # relative: resolved against the teammate's cwd


def refuse(reason: str) -> dict[str, Any]:
    # No request_id: the runtime fills in the pending request's id.
    return {"tool_uses": [{"name": "SendMessage", "input": {
        "to": "team-lead", "message": {"type": "shutdown_response", "approve": False,
                                       "reason": reason}}}]}


def test_scripted_tools_work_and_shutdown_is_refused_then_approved(crew: Crew) -> None:
    model = write_script(crew, [
        # input 1 (the prompt): a Write that works and a Read that fails; the agent carries on
        {"text": "Writing.", "tool_uses": [
            {"name": "Write", "input": {"file_path": "out/report.txt", "content": "scripted!"}},
            {"name": "Read", "input": {"file_path": "missing.txt"}}]},
        {"text": "Wrote it."},
        # input 2 (first shutdown request): refused with a reason
        refuse("still writing the report"),
        {"text": "Not yet."},
        # input 3 (second shutdown request): approved
        {"tool_uses": [{"name": "SendMessage", "input": {
            "to": "team-lead", "message": {"type": "shutdown_response", "approve": True}}}]},
    ])
    result = crew.spawn("w1", prompt="write the report", model=model)
    crew.wait_idle_notes("w1", 1)
    assert (crew.workdir / "out" / "report.txt").read_text() == "scripted!"
    results = [b for e in crew.transcript("w1") if e["kind"] == "message"
               for b in e["message"]["content"] if b.get("type") == "tool_result"]
    assert [bool(r.get("is_error")) for r in results] == [False, True]
    assert "file not found" in results[1]["content"]

    proc = crew.cli("shutdown", "w1", "--timeout", "5")
    assert proc.returncode == 1
    assert proc.stdout.strip() == "w1: refused (still writing the report)"
    assert error_lines(proc) == ["swarm: error: w1 refused: still writing the report "
                                 "(use --force to kill after the timeout)"]
    crew.wait_idle_notes("w1", 2)
    assert is_alive(result.pid) and crew.procs["w1"].poll() is None
    assert crew.state("w1").state == "idle"  # type: ignore[union-attr]
    # The refusal answered the request it was about.
    request_ids = [s.request_id for m in crew.team.inbox("w1", checked=False).messages(include_archive=True)
                   if isinstance(s := m.structured(), ShutdownRequest)]
    answers = [s for m in crew.lead_messages() if isinstance(s := m.structured(), ShutdownResponse)]
    assert [(a.request_id, a.approve) for a in answers] == [(request_ids[0], False)]

    proc = crew.cli("shutdown", "w1", "--timeout", "10")
    assert proc.returncode == 0, proc.stderr
    assert crew.exit_code("w1") == 0
    assert crew.state("w1").state == "exited"  # type: ignore[union-attr]


def test_a_script_past_its_last_turn_approves_a_shutdown_without_the_model(crew: Crew) -> None:
    """Nothing left to say, so nothing to decide: approved at once, never waited out (the lead
    waited SWARM_SHUTDOWN_GRACE for every such teammate, then killed it)."""
    model = write_script(crew, [{"text": "Done."}])
    result = crew.spawn("w1", prompt="go", model=model)
    crew.wait_idle_notes("w1", 1)
    proc = crew.cli("shutdown", "w1", "--timeout", "10")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    (line,) = proc.stdout.splitlines()
    assert line.startswith("w1: exited (its script has ended: shutting down without the model"), line
    assert crew.exit_code("w1") == 0
    assert not is_alive(result.pid)


def test_input_order_shutdown_then_lead_then_peers_and_read_after_transcript(crew: Crew) -> None:
    model = write_script(crew, [refuse("busy"), {"text": "Refused."}, {"text": "Read both."}])
    crew.register("peer")
    crew.register("w1", model=model)
    # Oldest first: the peer's message, then the lead's, then the shutdown request.
    peer_id = crew.send("w1", "from the peer", sender="peer", summary="peer note")
    lead_id = crew.send("w1", "from the lead", summary="lead note")
    crew.team.send("w1", ShutdownRequest(reason="stop"))
    crew.launch("w1")

    def read_only_once_in_transcript() -> bool:
        # Mailbox first, transcript second: a message seen read must already be in the transcript.
        box = crew.team.inbox("w1", checked=False)
        read = [m for m in box.messages(include_archive=True) if m.read]
        seen = "\n".join(t for texts in crew.inputs("w1") for t in texts)
        for message in read:
            assert message.text in seen, f"{message.id} marked read before the transcript had it"
        return len(crew.idle_notes("w1")) >= 2

    wait_until(read_only_once_in_transcript, 15, interval=0.001)
    inputs = crew.inputs("w1")
    assert len(inputs) == 2
    (shutdown,) = inputs[0]
    assert '"type":"shutdown_request"' in shutdown
    lead, peer = inputs[1]
    assert lead.startswith('<teammate-message from="team-lead" ')
    assert lead.endswith('summary="lead note">from the lead</teammate-message>')
    assert peer.startswith('<teammate-message from="peer"') and "from the peer" in peer
    box = crew.team.inbox("w1", checked=False)
    assert box.unread() == []
    assert {m.id for m in box.archived()} >= {peer_id, lead_id}
