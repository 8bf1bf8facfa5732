"""`swarm acp`, what reaches past the lead: the editor's MCP servers from `session/new` become
the lead's tools (its own call put to the editor first), and a teammate's file edit shows in
the editor as a tool call with its diff and location."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest
from acp.schema import EnvVariable, McpServerStdio

from tests.support.acp_server_support import Editor, scripted_lead, spawn
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until
from tests.support.mcp_fixtures import pids, write_server

pytestmark = pytest.mark.usefixtures("lead_env")
ENV = {"SWARM_PERMISSION_TIMEOUT": "120", "SWARM_BACKEND": "hidden"}


def test_the_editors_mcp_servers_reach_the_lead(tmp_path: Path) -> None:
    script = write_server(tmp_path)
    pidfile = tmp_path / "calc.pids"
    model = scripted_lead(tmp_path / "lead.json", [
        {"tool_uses": [{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]},
        {"text": "The sum is in."}])
    ed = Editor("--model", model, "--backend", "hidden", cwd=tmp_path, env=ENV)
    try:
        ed.initialize()
        server = McpServerStdio(name="calc", command=sys.executable, args=[str(script)],
                                env=[EnvVariable(name="PIDFILE", value=str(pidfile))])
        sid = ed.call(ed.conn.new_session(cwd=str(tmp_path), mcp_servers=[server])).session_id
        assert ed.prompt(sid, "Add two and three.").stop_reason == "end_turn", ed.stderr()
        # The lead's own call of a server's tool asks (default mode): the editor answered.
        assert [a.tool_call.title for a in ed.client.asked] == [
            'the lead wants to run: mcp__calc__add {"a": 2, "b": 3}']
        call = next(u for u in ed.updates("tool_call") if u.title == "mcp__calc__add")
        result = [u for u in ed.updates("tool_call_update") if u.tool_call_id == call.tool_call_id]
        assert result[-1].status == "completed" and result[-1].raw_output["content"] == "5"
        assert len(pids(pidfile)) == 1
    finally:
        assert ed.close() == 0, ed.stderr()
    assert not _alive(pids(pidfile)[0])  # the session's end stopped the editor's server


def test_a_teammates_edit_shows_as_a_tool_call_with_its_diff(tmp_path: Path) -> None:
    model = scripted_lead(tmp_path / "lead.json", [
        {"tool_uses": [{"name": "TaskCreate", "input": {
            "subject": "note", "description": "```write notes/todo.txt\nship it\n```"}},
            spawn("erin")]},
        {"text": "Erin wrote the note."}])
    ed = Editor("--model", model, "--teammate-model", "shell", "--backend", "hidden",
                "--permission-mode", "bypassPermissions", cwd=tmp_path, env=ENV)
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        assert ed.prompt(sid, "Write the note.").stop_reason == "end_turn", ed.stderr()
        assert (tmp_path / "notes" / "todo.txt").read_text() == "ship it\n"
        target = str(tmp_path / "notes" / "todo.txt")
        edits = [u for u in ed.updates("tool_call") if u.title.startswith("erin: Write")]
        assert len(edits) == 1, [u.title for u in ed.updates("tool_call")]
        edit = edits[0]
        assert edit.kind == "edit" and [loc.path for loc in edit.locations] == [target]
        assert [(d.path, d.new_text, d.old_text) for d in edit.content] == [
            (target, "ship it\n", None)]
        wait_until(lambda: any(u.tool_call_id == edit.tool_call_id and u.status == "completed"
                               for u in ed.updates("tool_call_update")), 10,
                   message="the edit's result")
    finally:
        assert ed.close() == 0, ed.stderr()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_leads_text_streams_and_the_approvals_option_changes_its_tools(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    """A real model SDK against the fake Messages API: the reply arrives in pieces and each
    piece is a message chunk; `approvals: lead` gives the lead AnswerPermission and says so."""
    text = "The team is ready for work, and nothing needs doing yet."
    fake_api.push_text(text)
    ed = Editor("--model", "sonnet", "--backend", "hidden", cwd=tmp_path, env=ENV)
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        ed.call(ed.conn.set_config_option(config_id="approvals", session_id=sid, value="lead"))
        assert ed.prompt(sid, "Anything to do?").stop_reason == "end_turn", ed.stderr()
        chunks = [u.content.text for u in ed.updates("agent_message_chunk")]
        assert "".join(chunks).strip() == text and len([c for c in chunks if c.strip()]) > 1
        first = fake_api.messages_requests()[0]
        assert "AnswerPermission" in [t["name"] for t in first["tools"]]
        assert "AnswerPermission" in first["system"][0]["text"]
    finally:
        assert ed.close() == 0, ed.stderr()
