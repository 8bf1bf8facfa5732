"""`swarm acp` driven by the official ACP SDK's client over stdio, as an editor drives it: a
scripted lead, offline `shell` teammates as real `swarm agent` processes on the hidden
backend, the team's real files."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import acp
import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.ops import approvals
from tests.support.acp_server_support import Editor, scripted_lead, spawn, task
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until

pytestmark = pytest.mark.usefixtures("lead_env")
ENV = {"SWARM_PERMISSION_TIMEOUT": "120", "SWARM_BACKEND": "hidden"}


def editor(tmp_path: Path, turns: list[dict[str, Any]], *args: str) -> Editor:
    model = scripted_lead(tmp_path / "lead.json", turns)
    return Editor("--model", model, "--teammate-model", "shell", "--backend", "hidden", *args,
                  cwd=tmp_path, env=ENV)


def titles(ed: Editor) -> list[str]:
    return [u.title for u in ed.updates("tool_call")]


def test_initialize_and_a_new_session_say_what_swarm_offers(tmp_path: Path) -> None:
    ed = editor(tmp_path, [{"text": "Hello."}])
    try:
        init = ed.initialize()
        assert init.protocol_version == 1
        assert init.agent_capabilities.load_session is True
        assert init.agent_info is not None and init.agent_info.name == "swarm"
        session = ed.new_session(tmp_path)
        assert Team.open(session.session_id).config().lead_pid  # a team with a lead
        assert session.modes is not None and session.modes.current_mode_id == "default"
        assert {m.id for m in session.modes.available_modes} >= {"default", "acceptEdits"}
        options = {o.id: o for o in session.config_options or []}
        assert set(options) == {"teammate_model", "max_teammates", "approvals"}
        assert options["teammate_model"].current_value == "shell"
        changed = ed.call(ed.conn.set_config_option(config_id="max_teammates",
                                                    session_id=session.session_id, value="2"))
        assert {o.id: o.current_value for o in changed.config_options}["max_teammates"] == "2"
        ed.call(ed.conn.set_session_mode(session_id=session.session_id, mode_id="acceptEdits"))
        config = Team.open(session.session_id).config()
        assert [m.permission_mode for m in config.members if m.name == "team-lead"] == ["acceptEdits"]
    finally:
        assert ed.close() == 0, ed.stderr()


def test_a_prompt_runs_two_teammates_through_two_tasks_with_the_plan_following(
        tmp_path: Path) -> None:
    ed = editor(tmp_path, [
        {"text": "Two tasks, two teammates.",
         "tool_uses": [task("one", "echo one"), task("two", "echo two"), spawn("alice"),
                       spawn("bob")]},
        {"text": "Both tasks are done."}], "--permission-mode", "bypassPermissions")
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        answer = ed.prompt(sid, "Echo one and two with the team.")
        assert answer.stop_reason == "end_turn", ed.stderr()
        tasks = Team.open(sid).tasks.list()
        assert [(t.subject, t.status) for t in tasks] == [("one", "completed"), ("two", "completed")]
        # Each team action a tool call, then its update with the result.
        started = ed.updates("tool_call")
        assert [u.title for u in started][:4] == [
            "TaskCreate: one", "TaskCreate: two", "SpawnTeammate: alice", "SpawnTeammate: bob"]
        done = {u.tool_call_id: u for u in ed.updates("tool_call_update") if u.status}
        assert all(done[u.tool_call_id].status == "completed" for u in started[:4])
        # The plan follows the task list: first both pending, at the end both completed.
        plans = [[(e.content, e.status) for e in u.entries] for u in ed.updates("plan")]
        assert plans[:2] == [[("#1 one", "pending")],
                             [("#1 one", "pending"), ("#2 two", "pending")]]
        assert plans[-1] == [("#1 one", "completed"), ("#2 two", "completed")]
        assert "Two tasks, two teammates." in ed.text() and "Both tasks are done." in ed.text()
    finally:
        assert ed.close() == 0, ed.stderr()


def test_teammates_requests_go_to_the_editor_and_one_between_turns_is_not_lost(
        tmp_path: Path) -> None:
    ed = editor(tmp_path, [{"text": "Carol makes the file.",
                            "tool_uses": [task("make", "touch made.txt"),
                                          spawn("carol", mode="default")]},
                           {"text": "Done."}])
    go = threading.Event()

    def answer(call: Any, options: Any) -> str:
        go.wait(60)  # the test looks at the team while the editor has not answered
        return "allow_always" if "made.txt" in json.dumps(call.raw_input) else "allow_once"

    ed.client.answer = answer
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        turn = ed.submit(ed.conn.prompt(session_id=sid, prompt=[acp.text_block("Make made.txt.")]))
        asked = wait_until(lambda: ed.client.asked, 60, message="the editor is asked")
        assert "touch made.txt" in json.dumps(asked[0].tool_call.raw_input)
        assert asked[0].tool_call.title.startswith("carol wants to run")
        assert {o.kind for o in asked[0].options} == {"allow_once", "allow_always", "reject_once"}
        # Nobody but the editor answers it: the request waits, the file is not made.
        team = Team.open(sid)
        assert [p.message.sender for p in approvals.pending_permissions(team)] == ["carol"]
        assert not (tmp_path / "made.txt").exists()
        go.set()
        assert turn.result(90).stop_reason == "end_turn", ed.stderr()
        assert (tmp_path / "made.txt").exists()
        assert "Bash(touch made.txt)" in team.config().allowed_rules  # "always": a team rule

        # Between turns: carol asks again; it waits for the next prompt's turn.
        seen = len(ed.client.asked)
        subprocess.run([SWARM, "send", "carol", "$ touch later.txt", "--team", sid],
                       check=True, capture_output=True, timeout=30, cwd=tmp_path)
        wait_until(lambda: approvals.pending_permissions(team), 60, message="carol's request")
        before = len(ed.updates())
        answer2 = ed.prompt(sid, "Carry on.")
        assert answer2.stop_reason == "end_turn", ed.stderr()
        assert len(ed.client.asked) == seen + 1
        later = ed.client.asked[-1]
        assert "touch later.txt" in json.dumps(later.tool_call.raw_input)
        # At the start of the turn, before the lead runs: only its tool call came first.
        assert later.at_update == before + 1
        assert ed.updates()[before].tool_call_id == later.tool_call.tool_call_id
        assert (tmp_path / "later.txt").exists()
    finally:
        go.set()
        assert ed.close() == 0, ed.stderr()


def test_a_rejected_request_is_denied_and_nothing_runs(tmp_path: Path) -> None:
    ed = editor(tmp_path, [{"tool_uses": [task("make", "touch no.txt"),
                                          spawn("carol", mode="default")]},
                           {"text": "Noted."}])
    ed.client.answer = lambda call, options: "reject_once"
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        ed.prompt(sid, "Make no.txt.")
        assert len(ed.client.asked) == 1
        assert not (tmp_path / "no.txt").exists()
        assert not approvals.pending_permissions(Team.open(sid))
    finally:
        assert ed.close() == 0, ed.stderr()


def test_cancel_interrupts_the_lead_and_the_teammates_turns(tmp_path: Path) -> None:
    ed = editor(tmp_path, [{"tool_uses": [task("wait", "sleep 120"), spawn("dave")]},
                           {"text": "Noted."}], "--permission-mode", "bypassPermissions")
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        turn = ed.submit(ed.conn.prompt(session_id=sid, prompt=[acp.text_block("Wait a while.")]))
        wait_until(lambda: any(e.status == "in_progress" for u in ed.updates("plan")
                               for e in u.entries), 60, message="dave works on the task")
        wait_until(lambda: (read_state(sid, "dave") or _NoState()).activity, 30,
                   message="dave runs its command")
        ed.call(ed.conn.cancel(session_id=sid))
        assert turn.result(30).stop_reason == "cancelled"
        state = wait_until(lambda: (s := read_state(sid, "dave")) and s.state == "idle" and s, 30,
                           message="dave's turn is interrupted")
        assert state.idle_reason == "interrupted"
    finally:
        assert ed.close() == 0, ed.stderr()


def test_load_resumes_the_team_and_replays_its_history(tmp_path: Path) -> None:
    first = editor(tmp_path, [{"text": "Started the work."}, {"text": "Resumed and carrying on."}])
    first.initialize()
    sid = first.new_session(tmp_path).session_id
    assert first.prompt(sid, "Start the work.").stop_reason == "end_turn"
    assert first.close() == 0, first.stderr()
    assert Team.open(sid).config().lead_pid is None  # kept for a load, led by nobody

    second = editor(tmp_path, [{"text": "Started the work."}, {"text": "Resumed and carrying on."}])
    try:
        second.initialize()
        second.call(second.conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[]))
        replayed = second.updates()  # all of them arrived before the answer
        said = [u.content.text for u in replayed if u.session_update == "user_message_chunk"]
        assert said == ["Start the work."]
        assert "Started the work." in second.text()
        assert second.prompt(sid, "Go on.").stop_reason == "end_turn"
        assert "Resumed and carrying on." in second.text()
    finally:
        assert second.close() == 0, second.stderr()


def test_an_untrusted_directory_runs_nothing_of_its_configuration(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".swarm").mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    (project / ".swarm" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"command": f"touch {marker}"}]}}))
    model = scripted_lead(tmp_path / "lead.json", [
        {"tool_uses": [{"name": "TaskList", "input": {}}]}, {"text": "Looked."}])
    ed = Editor("--model", model, "--backend", "hidden", cwd=tmp_path, env=ENV)
    try:
        ed.initialize()
        sid = ed.new_session(project).session_id
        assert ed.prompt(sid, "Look at the tasks.").stop_reason == "end_turn"
        assert not marker.exists()
        assert "project configuration ignored" in ed.text() and "swarm trust" in ed.text()
        assert "TaskList" in titles(ed)
    finally:
        assert ed.close() == 0, ed.stderr()
    trusted = Editor("--model", model, "--backend", "hidden", cwd=tmp_path,
                     env={**ENV, "SWARM_TRUST_PROJECT": "1"})
    try:  # the same project trusted: the hook runs (so the check above means something)
        trusted.initialize()
        sid = trusted.new_session(project).session_id
        trusted.prompt(sid, "Look at the tasks.")
        assert marker.exists()
    finally:
        assert trusted.close() == 0, trusted.stderr()


class _NoState:
    activity = None
