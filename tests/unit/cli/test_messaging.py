"""`swarm inbox` shows what messages say (folded, `--full` for all), structured messages as one
readable line, and `swarm inbox show ID` one message whole, from the live mailbox or the archive."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import (
    IdleNotification,
    Message,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownRequest,
    ShutdownResponse,
    TaskAssignment,
    TeammateTerminated,
)
from swarm.core.records.state import AgentState
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.core.text.readable import flat, fold, structured_line, tool_call
from tests.support.helpers import one_error
from tests.support.helpers import run_cli as run


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


def test_inbox_shows_the_text_of_a_message_not_only_its_summary(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    team.send("team-lead", "$ pytest -q\n3 passed, 1 failed in 0.2s\nFAILED test_x.py::test_y",
              sender="bob", summary="ran 1 command(s): failed")
    code, out, _ = run(capsys, "inbox", "--team", "alpha")
    assert code == 0
    assert "bob" in out and "ran 1 command(s): failed" in out
    assert "3 passed, 1 failed in 0.2s" in out and "FAILED test_x.py::test_y" in out


def test_long_messages_are_folded_and_full_shows_everything(
        team: Team, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    body = "\n".join(f"line {i:02d}" for i in range(1, 21))
    wide = "x" * 150
    team.send("team-lead", f"{wide}\n{body}", sender="bob", summary="a long report")
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = run(capsys, "inbox", "--team", "alpha")
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert "line 01" in out and "line 20" not in out
    assert "more lines" in out and "--full" in out
    _, full, _ = run(capsys, "inbox", "--team", "alpha", "--full")
    assert "line 01" in full and "line 20" in full and "more lines" not in full
    assert "".join(full.split()).count("x" * 150) == 1  # the wide line, folded, all there
    assert all(len(line) <= 80 for line in full.splitlines())


def test_structured_messages_read_as_one_line_with_their_fields(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    request = PermissionRequest(request_id="1a2b3c4d-0000", agent_id="bob@alpha",
                                tool_name="Bash", input={"command": "rm -rf build"})
    team.send("team-lead", request, sender="bob")
    team.send("team-lead", IdleNotification(sender="alice", summary="tests pass",
                                            completed_task_id="3", completed_status="completed"),
              sender="alice")
    _, out, _ = run(capsys, "inbox", "--team", "alpha")
    assert 'permission_request bob: Bash: rm -rf build [id 1a2b3c4d]' in out
    assert "idle_notification: available, completed #3 (completed): tests pass" in out
    assert '"type"' not in out  # no raw JSON
    assert len(out.strip().splitlines()) == 2


def test_inbox_show_prints_one_message_whole_by_any_id_prefix(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n".join(f"row {i}" for i in range(200))
    [first] = team.send("alice", text, sender="bob", summary="big")
    [second] = team.send("team-lead", "short", sender="alice")
    code, out, _ = run(capsys, "inbox", "show", first[:6], "--team", "alpha")
    assert code == 0
    assert out.endswith(text + "\n") and "to:      alice" in out and f"id:      {first}" in out
    # From the archive too, once it has been read.
    Team.open("alpha").inbox("team-lead").mark_read([second])
    assert Team.open("alpha").inbox("team-lead").messages() == []
    code, out, _ = run(capsys, "inbox", "show", second, "--team", "alpha", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["text"] == "short" and shown["to"] == "team-lead"
    assert shown["read"] is True and shown["from"] == "alice"


def test_inbox_show_a_structured_message_gives_its_line_and_fields(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    plan = "1. read the code\n2. change it\n3. run the tests"
    [sent] = team.send("team-lead", PlanApprovalRequest(plan=plan), sender="bob")
    _, out, _ = run(capsys, "inbox", "show", sent[:8], "--team", "alpha")
    assert "type:    plan_approval_request" in out
    assert json.loads(out[out.index("{"):])["plan"] == plan


def test_inbox_show_refuses_ambiguous_unknown_and_missing_ids(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    box = team.inbox("alice")
    box.deliver([Message(id="abc-1", sender="bob", text="one"),
                 Message(id="abc-2", sender="bob", text="two")])
    code, _, err = run(capsys, "inbox", "show", "abc", "--team", "alpha")
    assert code == 2 and "ambiguous" in err and "abc-1" in err and "abc-2" in err
    code, out, _ = run(capsys, "inbox", "show", "abc-2", "--team", "alpha")
    assert code == 0 and out.endswith("\ntwo\n")
    code, _, err = run(capsys, "inbox", "show", "zzz", "--team", "alpha")
    assert code == 2 and "no message with id 'zzz'" in err
    code, _, err = run(capsys, "inbox", "show", "--team", "alpha")
    assert code == 2 and "needs a message ID" in err
    code, _, err = run(capsys, "inbox", "alice", "abc", "--team", "alpha")
    assert code == 2 and "swarm inbox show ID" in err
    assert [m.text for m in box.messages()] == ["one", "two"]  # looking loses nothing


EVERY_KIND: list[tuple[Any, list[str]]] = [
    (IdleNotification(sender="bob", idle_reason="failed", failure_reason="API down"),
     ["idle_notification: failed", "failure: API down"]),
    (ShutdownRequest(request_id="feedbeef-1", reason="done for today"),
     ["shutdown_request [id feedbeef]", "done for today"]),
    (ShutdownResponse(request_id="feedbeef-1", approve=False, reason="mid-build"),
     ["shutdown_response: refused [id feedbeef]: mid-build"]),
    (PlanApprovalResponse(request_id="cafe0000-1", approve=True, permission_mode="acceptEdits"),
     ["plan_approval_response: approved (mode acceptEdits) [id cafe0000]"]),
    (PermissionResponse(request_id="cafe0000-1", approve=True, always=True),
     ["permission_response: approved (always) [id cafe0000]"]),
    (PermissionRequest(request_id="0badf00d", agent_id="carol@t", tool_name="Write",
                       input={"file_path": "/tmp/x", "content": "y"}),
     ['permission_request carol: Write /tmp/x (1 byte) [id 0badf00d]']),
    (TaskAssignment(task_id="7", subject="fix the\nbuild", assigned_by="team-lead"),
     ['task_assignment #7 "fix the build" by team-lead']),
    (TeammateTerminated(agent_id="bob@t", reason="killed (SIGTERM)"),
     ["teammate_terminated bob@t: killed (SIGTERM)"]),
]


@pytest.mark.parametrize(("kind", "needles"), EVERY_KIND)
def test_every_structured_kind_has_a_readable_line(kind: Any, needles: list[str]) -> None:
    line = structured_line(kind)
    assert "\n" not in line
    for needle in needles:
        assert needle in line


def test_plain_messages_and_tool_calls_read_on_one_line() -> None:
    assert flat("x\ny") == "x y"
    assert tool_call("Bash", {"command": "make\ntest"}) == 'Bash "make test"'
    assert tool_call("TaskUpdate", {"task_id": "3", "status": "completed"}) == \
        "TaskUpdate #3 completed"
    assert tool_call("SendMessage", {"to": "bob", "message": "hi"}) == "SendMessage to bob"
    assert tool_call("Mystery", {"n": 1}) == 'Mystery "{"n": 1}"'


def test_fold_keeps_line_breaks_and_marks_the_cut() -> None:
    lines = fold("a\n" + "b" * 50 + "\nc\nd", 30, "  ", max_lines=3)
    assert lines[0] == "  a" and lines[1] == "  " + "b" * 28
    assert lines[-1] == "  ... 3 more lines" and len(lines) == 3


def test_the_hint_for_a_stopped_recipient_fits_who_is_sending(
        capsys: pytest.CaptureFixture[str], team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead is told how to wake an exited teammate; a teammate (who may not use --wake or
    respawn) is told the message waits for the lead to wake it. Both are delivered, exit 0."""
    write_state(team.name, "alice", AgentState(state="exited", detail="shut down"))
    code, out, _ = run(capsys, "send", "alice", "one for you", "--team", team.name)
    assert code == 0 and out.splitlines()[1] == (
        "alice has exited (shut down): the message waits in its mailbox; wake it with "
        "`swarm send alice ... --wake` or `swarm respawn alice`")
    monkeypatch.setenv("SWARM_AGENT_ID", f"bob@{team.name}")
    code, out, _ = run(capsys, "send", "alice", "and one from bob", "--team", team.name,
                       "--summary", "from bob")
    assert code == 0 and out.splitlines()[1] == (
        "alice has exited (shut down): the message waits in its mailbox until the lead wakes it")
    assert [m.sender for m in team.inbox("alice").messages()] == ["team-lead", "bob"]


# -- swarm send: nothing, or not UTF-8 ----------------------------------------------------------
def test_send_of_an_empty_message_is_exit_2_and_sends_nothing(
        team: Team, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for args, stdin in ((("",), None), (("   \n",), None), (("-",), "")):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        code, _, err = run(capsys, "send", "team-lead", *args, "--team", "alpha")
        assert code == 2, err
        one_error(err, "empty")
    assert Team("alpha").inbox(LEAD_NAME, checked=False).messages(include_archive=True) == []
