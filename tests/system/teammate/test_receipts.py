"""Read receipts: `swarm send --wait-read` returns once the recipient has put the
message into its conversation (and not before), exits 124 when it has not by `--timeout`, and
fails at once on a dead or exited recipient; `swarm inbox --sent` shows each sent message as
unread, read or answered; the lead's SendMessage says when its recipient will not read.

Real `swarm agent` shell teammates (hidden backend) on both stores (files and a real
redis-server).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from swarm.core.records.names import LEAD_NAME
from swarm.core.store.liveness import is_alive
from swarm.runtime.tools.base import ToolContext, run_tool
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until


def send_wait(crew: Crew, *args: str) -> subprocess.Popen[str]:
    """`swarm send ... --wait-read` in the background (it blocks until the message is read)."""
    return subprocess.Popen([SWARM, "send", *args, "--wait-read"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=crew.workdir)


def unread_ids(crew: Crew, name: str) -> set[str]:
    return {m.id for m in crew.team.inbox(name, checked=False).unread()}


def sent_to(crew: Crew, name: str, text: str) -> str:
    """The id of the (only) message with `text` in `name`'s mailbox, live or archived."""
    (found,) = [m for m in crew.team.inbox(name, checked=False).messages(include_archive=True)
                if m.text == text]
    return found.id


def kill_member(crew: Crew, name: str) -> None:
    state = crew.state(name)
    assert state is not None and state.pid
    os.kill(state.pid, signal.SIGKILL)
    crew.procs[name].wait(10)
    wait_until(lambda: not is_alive(state.pid, state.started_at), 10, message="the agent gone")


# -- send --wait-read ------------------------------------------------------------------------
def test_wait_read_returns_once_a_busy_teammate_has_read_it(store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    gate = crew.workdir / "gate"  # w's Bash call lasts until the test opens it
    crew.send("w", f"$ touch started && until [ -e {gate} ]; do sleep 0.05; done; touch slept")
    wait_until(lambda: (crew.workdir / "started").exists(), 15, message="w in its sleep turn")
    proc = send_wait(crew, "w", "after the nap", "--timeout", "60")
    # w is busy in its Bash call: the message waits unread, and so does the sender.
    wait_until(lambda: unread_ids(crew, "w"), 10, message="the message in w's mailbox")
    assert proc.poll() is None and not (crew.workdir / "slept").exists()
    gate.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    # It returned only after the sleep, with the message read (in w's conversation).
    assert (crew.workdir / "slept").exists()
    message_id = sent_to(crew, "w", "after the nap")
    assert message_id not in unread_ids(crew, "w")
    assert any("after the nap" in "".join(texts) for texts in crew.inputs("w"))
    assert "sent to w" in out and "read by w" in out


def test_wait_read_on_an_idle_teammate_returns_with_json(store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    proc = crew.cli("send", "w", "$ echo hello", "--wait-read", "--timeout", "30", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["read"] == {"w": True}
    assert data["ids"][0] not in unread_ids(crew, "w")


def test_wait_read_times_out_with_124_on_a_member_that_never_started(
        store: str, crew: Crew) -> None:
    crew.register("z")
    started = time.monotonic()
    proc = crew.cli("send", "z", "are you there?", "--wait-read", "--timeout", "1")
    assert proc.returncode == 124, proc.stderr
    assert time.monotonic() - started >= 1
    (line,) = error_lines(proc)
    assert "z has not read" in line and "1s" in line
    assert "sent to z" in proc.stdout
    assert len(unread_ids(crew, "z")) == 1  # still delivered: it waits in the mailbox


def test_wait_read_times_out_on_a_stopped_teammate_then_it_reads_it(
        store: str, crew: Crew) -> None:
    crew.spawn("w")
    state = crew.wait_state("w", "idle")
    assert state.pid
    os.kill(state.pid, signal.SIGSTOP)
    try:
        proc = crew.cli("send", "w", "$ echo later", "--wait-read", "--timeout", "2")
        assert proc.returncode == 124, proc.stderr
        assert len(unread_ids(crew, "w")) == 1
    finally:
        os.kill(state.pid, signal.SIGCONT)
    wait_until(lambda: not unread_ids(crew, "w"), 15, message="w reads it once continued")


def test_wait_read_fails_at_once_on_a_dead_member(store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    kill_member(crew, "w")
    started = time.monotonic()
    proc = crew.cli("send", "w", "hello?", "--wait-read", "--timeout", "120")
    assert proc.returncode == 1, proc.stderr
    assert time.monotonic() - started < 60  # not the timeout: at once
    (line,) = error_lines(proc)
    assert "w is dead" in line and "will not read" in line and "swarm respawn w" in line
    assert "sent to w" in proc.stdout


def test_wait_read_fails_when_the_recipient_dies_while_waiting(store: str, crew: Crew) -> None:
    crew.spawn("w")
    state = crew.wait_state("w", "idle")
    assert state.pid
    os.kill(state.pid, signal.SIGSTOP)  # alive, but it will not read
    proc = send_wait(crew, "w", "hello?", "--timeout", "120")
    wait_until(lambda: unread_ids(crew, "w"), 10, message="the message in w's mailbox")
    started = time.monotonic()
    kill_member(crew, "w")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert time.monotonic() - started < 60
    assert "w is dead" in err and "will not read" in err


def test_wait_read_on_an_exited_member_fails_at_once_and_wake_makes_it_read(
        store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    assert crew.cli("shutdown", "w", "--timeout", "20").returncode == 0
    crew.wait_state("w", "exited")
    proc = crew.cli("send", "w", "$ echo one", "--wait-read", "--timeout", "120")
    assert proc.returncode == 1, proc.stderr
    (line,) = error_lines(proc)
    assert "w has exited" in line and "--wake" in line
    proc = crew.cli("send", "w", "$ echo two", "--wake", "--wait-read", "--timeout", "60")
    assert proc.returncode == 0, proc.stderr
    assert "read by w" in proc.stdout
    assert sent_to(crew, "w", "$ echo two") not in unread_ids(crew, "w")


def test_send_without_wait_read_is_unchanged(store: str, crew: Crew) -> None:
    crew.register("z")
    proc = crew.cli("send", "z", "hi", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "read" not in json.loads(proc.stdout)
    bad = crew.cli("send", "z", "hi", "--timeout", "5")
    assert bad.returncode == 2 and "--timeout needs --wait-read" in bad.stderr


# -- inbox --sent ----------------------------------------------------------------------------
def sent_states(crew: Crew, *args: str) -> dict[str, str]:
    proc = crew.cli("inbox", *args, "--sent", "--json")
    assert proc.returncode == 0, proc.stderr
    return {f"{row['to']}:{row['text']}": row["state"] for row in json.loads(proc.stdout)}


def test_inbox_sent_shows_unread_read_and_answered(store: str, crew: Crew) -> None:
    crew.register("z")
    crew.spawn("w")
    crew.wait_state("w", "idle")
    crew.send("z", "never read")
    crew.send("w", "$ echo hi")
    wait_until(lambda: any(m.sender == "w" and m.structured() is None
                           for m in crew.lead_messages()), 15, message="w's report")
    states = sent_states(crew)
    assert states == {"z:never read": "unread", "w:$ echo hi": "answered"}
    # w's side: its report to the lead is unread until the lead reads it, then answered.
    (report,) = [k for k in sent_states(crew, "w") if k.startswith(f"{LEAD_NAME}:")
                 and "echo hi" in k]
    assert sent_states(crew, "w")[report] == "unread"
    assert crew.cli("inbox", "--mark-read").returncode == 0
    assert sent_states(crew, "w")[report] == "read"
    crew.send("w", "thanks")
    assert sent_states(crew, "w")[report] == "answered"
    text = crew.cli("inbox", "w", "--sent").stdout
    assert f"→ {LEAD_NAME}" in text and "answered" in text


def test_inbox_sent_a_shutdown_request_is_answered_by_its_response(
        store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    assert crew.cli("shutdown", "w", "--timeout", "20").returncode == 0
    proc = crew.cli("inbox", "--sent", "--json")
    (row,) = [r for r in json.loads(proc.stdout) if '"shutdown_request"' in r["text"]]
    assert row["state"] == "answered" and row["to"] == "w"
    assert crew.cli("inbox", "--sent", "--mark-read").returncode == 2


# -- the lead's SendMessage ------------------------------------------------------------------
def lead_send(crew: Crew, to: str, text: str) -> str:
    from swarm.lead.lead_tools import lead_tools

    tool = lead_tools("human", coordinator=False)["SendMessage"]
    ctx = ToolContext(team=crew.team, name=LEAD_NAME, cwd=crew.workdir)
    return run_tool(tool, {"to": to, "message": text, "summary": "s"}, ctx).content


def test_the_leads_send_to_a_dead_member_says_it_will_not_read(store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    kill_member(crew, "w")
    result = lead_send(crew, "w", "are you there?")
    assert "w is dead" in result and "it will not read this" in result
    assert "respawn" in result
    assert not result.startswith("delivered to w (unread)")


def test_the_leads_send_to_a_live_member_says_delivered_unread(store: str, crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    crew.register("z")
    assert lead_send(crew, "w", "hi").startswith("delivered to w (unread)")
    assert lead_send(crew, "z", "hi").startswith("delivered to z (unread)")


def test_a_teammates_send_to_a_dead_peer_says_it_will_not_read(store: str, crew: Crew) -> None:
    from swarm.runtime.tools.registry import all_tools

    crew.spawn("w")
    crew.wait_state("w", "idle")
    crew.register("v")
    ctx = ToolContext(team=crew.team, name="v", cwd=crew.workdir)
    tool = all_tools()["SendMessage"]
    assert run_tool(tool, {"to": "w", "message": "hi", "summary": "s"}, ctx).content == (
        "sent to w (1 recipient(s))")
    kill_member(crew, "w")
    result = run_tool(tool, {"to": "w", "message": "hi", "summary": "s"}, ctx).content
    assert result.startswith("sent to w (1 recipient(s))")
    assert "w is dead" in result and "will not read this until the lead wakes it" in result
    assert "swarm respawn" not in result  # a lead command: not the teammate's to run


def test_a_read_on_redis_wakes_only_the_watchers_that_ask_for_it(redis_url: str) -> None:
    from swarm.core.store import select as stores
    from swarm.core.team.team import Team

    team = Team.create("feed")
    team.add_member("w", model="shell", backend="hidden")
    (message_id,) = team.send("w", "hi", summary="s")
    box = team.inbox("w", checked=False)
    with stores.team_watcher(team.name, [], False, [], reads=["w"]) as receipts, \
            stores.team_watcher(team.name, None, True, ["w"]) as lead, \
            stores.team_watcher(team.name, ["w"], True, []) as own:
        assert box.mark_read([message_id]) == 1
        assert receipts.wait(10)
        # Neither the lead's team-wide watcher nor the reader's own wakes for its reading.
        assert not lead.wait(0.5) and not own.wait(0.5)
    assert message_id not in {m.id for m in box.unread()}
