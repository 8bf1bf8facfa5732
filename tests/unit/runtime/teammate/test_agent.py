"""One tool call's walk, from the loop to the decision and back (docs/design/runtime.md): a
teammate's loop asks the small objects the Agent owns (its policy, its turn control, its
observers, its tools' host) and never climbs back to the Agent itself; asking "may I?" reads
no mailbox, and a mode the lead set during the turn still applies to the next call."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import ModeChange
from swarm.core.team.team import Team
from swarm.runtime.teammate.agent import Agent


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Agent]:
    monkeypatch.setenv("SWARM_PERMISSION_TIMEOUT", "1")  # nobody answers here
    team = Team.create("walk")
    team.add_member("ada", cwd=str(tmp_path), model="shell", permission_mode="acceptEdits",
                    allow_rules=["Bash"])
    with contextlib.redirect_stdout(io.StringIO()):  # its console lines
        yield Agent("walk", "ada")


def calls_into(target: object, run: Any) -> list[str]:
    """The methods of `target` that ran on this thread while `run()` ran."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_locals.get("self") is target:
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def use(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": args}


def test_a_tool_call_never_climbs_back_to_the_agent(agent: Agent, tmp_path: Path) -> None:
    blocks: list[dict[str, Any]] = []
    climbs = calls_into(agent, lambda: blocks.append(agent.loop.call(use(
        "Bash", command="echo walked > out.txt; cat out.txt"))))
    assert climbs == []
    assert blocks[0]["content"].strip() == "walked" and not blocks[0].get("is_error")
    # ...and each part it owns saw the call: the turn's record, the state, the policy's verdict
    assert agent.turn_log.turn.last_action == "Bash: echo walked > out.txt; cat out.txt"
    assert agent.command.proc is None and agent.state.child_pgid is None  # it ended
    assert (tmp_path / "out.txt").read_text() == "walked\n"


def test_asking_may_i_reads_no_mailbox_and_a_mode_set_meanwhile_applies_to_the_next_call(
        agent: Agent, tmp_path: Path) -> None:
    write = use("Write", file_path=str(tmp_path / "plan.md"), content="x")
    agent.team.send("ada", ModeChange(mode="plan", reason="look first"), sender=LEAD_NAME)
    tool = agent.loop.tools["Write"]
    decision = agent.loop.permits.check(tool, write["input"], write["id"])
    assert decision.behavior == "allow"  # acceptEdits, inside its cwd
    assert [m.structured() for m in agent.box.unread()] != []  # the order is still unread
    assert agent.policy.mode == "acceptEdits"
    block = agent.loop.call(write)  # the turn applies the lead's order before the call
    assert agent.policy.mode == "plan" and agent.box.unread() == []
    assert block.get("is_error") and "not allowed in plan mode" in block["content"]
    assert not (tmp_path / "plan.md").exists()
