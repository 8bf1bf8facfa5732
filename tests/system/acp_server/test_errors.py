"""`swarm acp` on bad input and at its end: a bad option is one line and exit 2 before the
editor is answered; a session without a model is one JSON-RPC error that names what to do and
leaves no team; SIGTERM shuts the teammates down and keeps the team for a load."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from acp import RequestError

from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.support.acp_server_support import Editor, scripted_lead, spawn, task
from tests.support.agent_fixtures import agent_processes
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until

pytestmark = pytest.mark.usefixtures("lead_env")


def test_a_bad_option_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run([SWARM, "acp", "--max-teammates", "0"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "swarm: error: --max-teammates must be at least 1"
    assert proc.stdout == ""


def test_a_session_without_a_model_is_one_error_and_leaves_no_team(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    ed = Editor(cwd=tmp_path)
    try:
        ed.initialize()
        with pytest.raises(RequestError) as failed:
            ed.new_session(tmp_path)
        # what to do, under the name of the command the editor started (not `swarm lead`)
        message = failed.value.data["message"]  # type: ignore[index]
        assert message.startswith("the lead needs a model: set ANTHROPIC_API_KEY")
        assert "swarm lead" not in message
        assert not paths.teams_dir().exists() or not any(paths.teams_dir().iterdir())
        with pytest.raises(RequestError):
            ed.call(ed.conn.new_session(cwd="relative/dir", mcp_servers=[]))
    finally:
        assert ed.close() == 0, ed.stderr()


def test_sigterm_shuts_the_teammates_down_and_keeps_the_team(tmp_path: Path,
                                                             swarm_home: Path) -> None:
    model = scripted_lead(tmp_path / "lead.json", [
        {"tool_uses": [task("one", "echo one"), spawn("frank")]}, {"text": "Done."}])
    ed = Editor("--model", model, "--teammate-model", "shell", "--backend", "hidden",
                "--permission-mode", "bypassPermissions", cwd=tmp_path,
                env={"SWARM_BACKEND": "hidden"})
    try:
        ed.initialize()
        sid = ed.new_session(tmp_path).session_id
        assert ed.prompt(sid, "Echo one.").stop_reason == "end_turn", ed.stderr()
        assert agent_processes(swarm_home)  # frank is up between prompts
        os.kill(ed.proc.pid, signal.SIGTERM)
        wait_until(lambda: ed.proc.returncode is not None, 30, message="swarm acp exits")
        assert ed.proc.returncode == 0, ed.stderr()
        assert agent_processes(swarm_home) == []
        assert Team.open(sid).config().lead_pid is None
    finally:
        ed.close()


def test_session_close_shuts_its_teammates_down_and_the_process_goes_on(
        tmp_path: Path, swarm_home: Path) -> None:
    model = scripted_lead(tmp_path / "lead.json", [
        {"tool_uses": [task("one", "echo one"), spawn("gina")]}, {"text": "Done."}])
    ed = Editor("--model", model, "--teammate-model", "shell", "--backend", "hidden",
                "--permission-mode", "bypassPermissions", cwd=tmp_path,
                env={"SWARM_BACKEND": "hidden"})
    try:
        init = ed.initialize()
        assert init.agent_capabilities.session_capabilities.close is not None
        sid = ed.new_session(tmp_path).session_id
        assert ed.prompt(sid, "Echo one.").stop_reason == "end_turn", ed.stderr()
        assert agent_processes(swarm_home)
        ed.call(ed.conn.close_session(session_id=sid))
        wait_until(lambda: agent_processes(swarm_home) == [], 15, message="gina exits")
        assert Team.open(sid).config().lead_pid is None  # kept for a load
        with pytest.raises(RequestError):
            ed.prompt(sid, "Again.")
        assert ed.new_session(tmp_path).session_id != sid  # the process goes on
    finally:
        assert ed.close() == 0, ed.stderr()
