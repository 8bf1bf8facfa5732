"""Attention (swarm/core/team/attention.py): the notify command runs as the person."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.team import attention
from tests.support.helpers import wait_until


def test_the_notify_command_runs_as_the_person_not_the_teammate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = tmp_path / "env.txt"
    monkeypatch.setenv("SWARM_NOTIFY_COMMAND", f"env > {got}.tmp && mv {got}.tmp {got}")
    monkeypatch.setenv("SWARM_AGENT_ID", "careful@alpha")  # the teammate that asks rings
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    attention.ring(attention.Alert(team="alpha", sender="careful", kind="permission_request",
                                   request_id="r1", text="Bash: ls", answer="swarm permissions"
                                   " approve r1"), {})
    text = wait_until(lambda: got.read_text() if got.exists() else "", 10,
                      message="the notify command")
    variables = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert "SWARM_AGENT_ID" not in variables, text
    assert variables["SWARM_NOTIFY_SENDER"] == "careful"
    assert variables["SWARM_TEAM"] == "alpha"  # `swarm permissions approve` finds the team

