"""`swarm acp` with many sessions working at once: each prompt's turn has a thread of its own,
so a cancel is answered while seven other turns wait on the editor."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import acp
import pytest

from tests.support.acp_server_support import Editor, scripted_lead
from tests.support.helpers import wait_until

pytestmark = pytest.mark.usefixtures("lead_env")
SESSIONS = 8  # more than a default pool of worker threads has on a small machine


def test_a_cancel_is_answered_while_many_turns_wait_on_the_editor(tmp_path: Path) -> None:
    model = scripted_lead(tmp_path / "lead.json", [
        {"tool_uses": [{"name": "Bash", "input": {"command": "touch asked.txt"}}]},
        {"text": "Stopped."}])
    ed = Editor("--model", model, "--backend", "hidden", cwd=tmp_path,
                env={"SWARM_BACKEND": "hidden"})
    release = threading.Event()

    def answer(call: Any, options: Any) -> str:
        release.wait(120)  # every lead waits on the editor until the test is done
        return "reject_once"

    ed.client.answer = answer
    try:
        ed.initialize()
        sids = [ed.new_session(tmp_path).session_id for _ in range(SESSIONS)]
        turns = [ed.submit(ed.conn.prompt(session_id=sid, prompt=[acp.text_block("Touch.")]))
                 for sid in sids]
        wait_until(lambda: len(ed.client.asked) == SESSIONS, 60,
                   message="every session's lead asks the editor")
        ed.call(ed.conn.cancel(session_id=sids[0]))
        assert turns[0].result(30).stop_reason == "cancelled"
        assert not any(turn.done() for turn in turns[1:])
        for sid in sids[1:]:
            ed.call(ed.conn.cancel(session_id=sid))
        assert {turn.result(30).stop_reason for turn in turns[1:]} == {"cancelled"}
        assert not (tmp_path / "asked.txt").exists()
    finally:
        release.set()
        assert ed.close() == 0, ed.stderr()
