"""Mailboxes through the Team API: addressing rules, limits, read/compaction, wait, crashes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from swarm.core.records.protocol import (
    MAX_MESSAGE_BYTES,
    MAX_SUMMARY_BYTES,
    IdleNotification,
    ShutdownRequest,
)
from swarm.core.store import paths
from swarm.core.store.disk import locked
from swarm.core.team.team import Team
from swarm.errors import MessageTooLargeError, ProtocolError, TooLargeError, UnknownRecipientError

ROOT = Path(__file__).resolve().parents[5]


def inbox_files(team: Team) -> list[str]:
    return sorted(p.name for p in paths.inboxes_dir(team.name).iterdir())


def run_child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT)


# -- addressing --------------------------------------------------------------------------------
def test_send_to_one_member(team: Team) -> None:
    ids = team.send("alice", "please look at the build\nmore detail", summary=None)
    assert len(ids) == 1
    [message] = team.inbox("alice").messages()
    assert message.id == ids[0]
    assert message.sender == "team-lead"
    assert message.text == "please look at the build\nmore detail"
    assert message.summary == "please look at the build"  # first line when none is given
    assert message.color == "white"
    assert message.read is False
    assert team.inbox("bob").messages() == []
    lines = paths.inbox(team.name, "alice").read_bytes().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["from"] == "team-lead"  # JSON Lines


def test_recipient_and_sender_names_are_case_insensitive(team: Team) -> None:
    team.send("ALICE", "hi", sender="Bob", summary="s")
    [message] = team.inbox("Alice").messages()
    assert message.sender == "bob"
    assert message.color == team.member("bob").color


@pytest.mark.parametrize("to", ["nobody", "../x", "a/b", "", "carol@alpha", "alice "])
def test_unknown_recipient_is_an_error_and_creates_nothing(team: Team, to: str) -> None:
    before = inbox_files(team)
    with pytest.raises(UnknownRecipientError) as info:
        team.send(to, "hello")
    assert "not a member" in str(info.value)
    assert info.value.exit_code == 2
    assert inbox_files(team) == before
    assert not list(paths.team_dir(team.name).rglob("*nobody*"))


def test_unknown_sender_is_an_error(team: Team) -> None:
    with pytest.raises(UnknownRecipientError):
        team.send("alice", "hello", sender="mallory")
    assert inbox_files(team) == []


def test_inbox_of_a_non_member_is_an_error(team: Team) -> None:
    with pytest.raises(UnknownRecipientError):
        team.inbox("nobody")


def test_broadcast_reaches_everyone_but_the_sender(team: Team) -> None:
    ids = team.send("*", "standup in 5", sender="alice")
    assert len(ids) == 2
    assert team.inbox("alice").messages() == []
    for name in ("team-lead", "bob"):
        [message] = team.inbox(name).messages()
        assert message.text == "standup in 5" and message.sender == "alice"
    assert len(set(ids)) == 2  # one message (with its own id) per recipient


def test_broadcast_from_the_lead(team: Team) -> None:
    assert len(team.send("*", "hello all")) == 2
    assert team.inbox("team-lead").messages() == []


def test_structured_broadcast_is_refused(team: Team) -> None:
    for body in (ShutdownRequest(reason="bye"), {"type": "shutdown_request", "reason": "bye"},
                 json.dumps({"type": "shutdown_request", "reason": "bye"})):
        with pytest.raises(ProtocolError) as info:
            team.send("*", body)  # type: ignore[arg-type]
        assert "broadcast" in str(info.value)
    assert inbox_files(team) == []


def test_shutdown_response_only_to_the_lead(team: Team) -> None:
    response = {"type": "shutdown_response", "request_id": "r1", "approve": True}
    with pytest.raises(ProtocolError) as info:
        team.send("bob", response, sender="alice")
    assert "team-lead" in str(info.value)
    assert inbox_files(team) == []
    [sent] = team.send("team-lead", response, sender="alice")
    [message] = team.inbox().messages()
    assert message.id == sent
    assert message.summary is None  # structured messages carry no plain-text preview
    assert message.structured() is not None
    assert json.loads(message.text)["approve"] is True


def test_invalid_structured_message_is_refused(team: Team) -> None:
    refusal = {"type": "shutdown_response", "request_id": "r1", "approve": False}
    with pytest.raises(ProtocolError) as info:
        team.send("team-lead", refusal, sender="alice")
    assert "reason" in str(info.value)
    # As text that looks structured, too: it is validated, not delivered as plain text.
    with pytest.raises(ProtocolError):
        team.send("team-lead", json.dumps(refusal), sender="alice")
    assert inbox_files(team) == []


def test_oversized_message_is_refused_with_nothing_written(team: Team) -> None:
    team.send("alice", "first")
    before = paths.inbox(team.name, "alice").read_bytes()
    for text in ("x" * (MAX_MESSAGE_BYTES + 1), "é" * (MAX_MESSAGE_BYTES // 2 + 1)):
        with pytest.raises(MessageTooLargeError) as info:
            team.send("alice", text)
        assert str(MAX_MESSAGE_BYTES) in str(info.value)
        assert info.value.exit_code == 2
    with pytest.raises(MessageTooLargeError):
        team.send("*", "y" * (MAX_MESSAGE_BYTES + 1))
    assert paths.inbox(team.name, "alice").read_bytes() == before
    assert inbox_files(team) == ["alice.jsonl", "alice.jsonl.lock"]


def test_message_at_the_limit_is_delivered(team: Team) -> None:
    text = "z" * MAX_MESSAGE_BYTES
    [sent] = team.send("alice", text)
    [message] = team.inbox("alice").messages()
    assert message.id == sent and message.text == text


# -- reading, mark_read, compaction --------------------------------------------------------------
def test_mark_read_compacts_into_the_archive(team: Team) -> None:
    ids = [team.send("alice", f"m{i}")[0] for i in range(10)]
    box = team.inbox("alice")
    live_path = paths.inbox(team.name, "alice")
    size_before = live_path.stat().st_size
    assert box.mark_read(ids[:6]) == 6
    assert [m.id for m in box.messages()] == ids[6:]
    assert [m.id for m in box.unread()] == ids[6:]
    assert live_path.stat().st_size < size_before
    archived = box.archived()
    assert [m.id for m in archived] == ids[:6]
    assert all(m.read for m in archived)
    everything = box.messages(include_archive=True)
    assert [m.id for m in everything] == ids  # oldest first, each once
    assert [m.text for m in everything] == [f"m{i}" for i in range(10)]
    assert paths.inbox_archive(team.name, "alice").stat().st_mode & 0o777 == 0o600


def test_mark_read_twice_and_unknown_ids_change_nothing(team: Team) -> None:
    [sent] = team.send("alice", "once")
    box = team.inbox("alice")
    assert box.mark_read([sent]) == 1
    assert box.mark_read([sent]) == 0
    assert box.mark_read(["not-an-id"]) == 0
    assert box.mark_read([]) == 0
    assert [m.id for m in box.archived()] == [sent]
    assert box.messages() == []


def test_mark_read_without_compaction_then_compact(team: Team) -> None:
    ids = [team.send("alice", f"m{i}")[0] for i in range(4)]
    box = team.inbox("alice")
    assert box.mark_read(ids[:2], compact=False) == 2
    live = box.messages()
    assert [m.read for m in live] == [True, True, False, False]
    assert [m.id for m in box.unread()] == ids[2:]
    assert box.archived() == []
    assert box.compact() == 2
    assert [m.id for m in box.messages()] == ids[2:]
    assert [m.id for m in box.archived()] == ids[:2]
    assert box.compact() == 0


def test_compact_of_a_missing_mailbox(team: Team) -> None:
    assert team.inbox("bob").compact() == 0
    assert inbox_files(team) == []


def test_live_mailbox_stays_small_with_history(team: Team) -> None:
    box = team.inbox("alice")
    for i in range(200):
        [sent] = team.send("alice", f"message {i}")
        box.mark_read([sent])
    assert box.messages() == []
    assert paths.inbox(team.name, "alice").stat().st_size < 16
    assert len(box.messages(include_archive=True)) == 200


def test_torn_archive_line_is_skipped_with_a_warning(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [team.send("alice", f"m{i}")[0] for i in range(2)]
    box = team.inbox("alice")
    box.mark_read(ids[:1])
    with open(box.archive_path, "ab") as handle:
        handle.write(b'{"id": "torn", "from": "bo')  # a crash mid-append
    box.mark_read(ids[1:])
    assert [m.id for m in box.archived()] == ids
    assert "skipping unreadable line 2" in capsys.readouterr().err


# -- corrupt entries ---------------------------------------------------------------------------
def test_torn_last_line_is_moved_aside_alone_and_send_goes_on(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer killed mid-append leaves a line without its newline: the next send ends it, so
    the torn line is quarantined alone and the new message is not swallowed."""
    [first] = team.send("alice", "before the crash")
    live = paths.inbox(team.name, "alice")
    torn = b'{"id": "1", "from": "team-lead", "text": "half'
    with open(live, "ab") as handle:
        handle.write(torn)
    [sent] = team.send("alice", "after the crash")
    assert [m.id for m in team.inbox("alice").messages()] == [first, sent]
    err = capsys.readouterr().err
    assert err.startswith("swarm: warning:") and "alice.jsonl" in err
    assert "1 unreadable line(s) moved aside" in err and "Traceback" not in err
    [aside] = list(live.parent.glob("alice.jsonl.corrupt-*"))
    assert aside.read_bytes() == torn + b"\n"  # kept for a human to recover
    assert aside.stat().st_mode & 0o777 == 0o600
    assert b"half" not in live.read_bytes()


def test_one_garbled_entry_among_twelve_leaves_eleven_deliverable(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    request = {"type": "permission_request", "agent_id": "bob@alpha", "tool_name": "Bash",
               "input": {"command": "make"}}
    ids = [team.send("alice", request, sender="bob")[0] if i == 5
           else team.send("alice", f"m{i}")[0] for i in range(12)]
    live = paths.inbox(team.name, "alice")
    lines = live.read_bytes().splitlines()
    garbled = lines[7][:40] + b"\x00garbage" + lines[7][60:]
    lines[7] = garbled
    live.write_bytes(b"".join(line + b"\n" for line in lines))
    box = team.inbox("alice")
    unread = box.unread()
    assert [m.id for m in unread] == ids[:7] + ids[8:]
    assert unread[5].structured() is not None  # the pending permission request is still there
    assert "moved aside" in capsys.readouterr().err
    [aside] = list(live.parent.glob("alice.jsonl.corrupt-*"))
    assert aside.read_bytes() == garbled + b"\n"
    assert len(live.read_bytes().splitlines()) == 11  # the live file no longer has it
    assert box.mark_read([m.id for m in unread]) == 11
    assert [m.id for m in box.archived()] == ids[:7] + ids[8:]


def test_garbled_entry_seen_while_the_lock_is_taken_is_skipped_then_moved(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    [sent] = team.send("alice", "fine")
    live = paths.inbox(team.name, "alice")
    with open(live, "ab") as handle:
        handle.write(b"not json at all\n")
    with locked(live):  # a reader cannot move it now: it only skips it
        assert [m.id for m in team.inbox("alice").unread()] == [sent]
    assert "skipping 1 unreadable line(s)" in capsys.readouterr().err
    assert not list(live.parent.glob("alice.jsonl.corrupt-*"))
    assert [m.id for m in team.inbox("alice").unread()] == [sent]
    assert len(list(live.parent.glob("alice.jsonl.corrupt-*"))) == 1


def test_a_line_in_flight_is_not_read_yet(team: Team) -> None:
    """A reader that catches an append half-written sees the messages before it, no error."""
    [sent] = team.send("alice", "whole")
    live = paths.inbox(team.name, "alice")
    whole = live.read_bytes()
    with open(live, "ab") as handle:
        handle.write(whole[:30])  # no newline yet: an append still being written
    assert [m.id for m in team.inbox("alice").messages()] == [sent]
    assert not list(live.parent.glob("alice.jsonl.corrupt-*"))


# -- idle notifications supersede -------------------------------------------------------------
def test_500_idle_notifications_from_one_member_leave_one_unread(team: Team) -> None:
    [question] = team.send("team-lead", "a question", sender="alice")
    for i in range(500):
        team.send("team-lead", IdleNotification(sender="alice", summary=f"idle {i}"),
                  sender="alice")
    [other] = team.send("team-lead", IdleNotification(sender="bob"), sender="bob")
    box = team.inbox()
    unread = box.unread()
    assert [m.id for m in unread][0::2] == [question, other]
    idle = unread[1].structured()
    assert isinstance(idle, IdleNotification) and idle.summary == "idle 499"  # the newest
    assert len(box.messages()) == 502  # the older ones read as read until compacted
    assert box.compact() == 499
    assert len(box.messages()) == 3 and len(box.archived()) == 499
    # A later one supersedes the one left unread, and only from the same member.
    team.send("team-lead", IdleNotification(sender="alice", summary="later"), sender="alice")
    summaries = [getattr(m.structured(), "summary", m.text) for m in box.unread()]
    assert summaries == ["a question", None, "later"]


# -- size limits -------------------------------------------------------------------------------
def test_every_text_field_has_a_limit(team: Team) -> None:
    with pytest.raises(TooLargeError) as info:
        team.send("alice", "short", summary="s" * (MAX_SUMMARY_BYTES + 1))
    assert f"summary is {MAX_SUMMARY_BYTES + 1} bytes" in str(info.value)
    assert info.value.exit_code == 2
    assert inbox_files(team) == []
    team.send("alice", "short", summary="é" * (MAX_SUMMARY_BYTES // 2))  # at the limit
    assert len(team.inbox("alice").messages()) == 1


# -- wait --------------------------------------------------------------------------------------
def test_wait_returns_existing_unread_at_once(team: Team) -> None:
    [sent] = team.send("alice", "already here")
    start = time.monotonic()
    got = team.inbox("alice").wait(timeout=30)  # would sit out the 30 s if it missed it
    assert [m.id for m in got] == [sent]
    assert time.monotonic() - start < 5


def test_wait_times_out_with_nothing(team: Team) -> None:
    start = time.monotonic()
    assert team.inbox("alice").wait(timeout=0.3) == []
    elapsed = time.monotonic() - start
    assert 0.29 <= elapsed < 5


def test_wait_ignores_read_messages(team: Team) -> None:
    [sent] = team.send("alice", "old")
    team.inbox("alice").mark_read([sent], compact=False)
    assert team.inbox("alice").wait(timeout=0.2) == []


def test_mailbox_repr_and_direct_use(team: Team) -> None:
    box = team.inbox("alice", checked=False)
    assert "alice@alpha" in repr(box)
    assert box.messages(include_archive=True) == []
