"""The team's MCP server on a host (mcp_server/hub.py), served in a thread of the test: a
request acts as the member whose driver registered its token's hash, never as another member or
the lead; a session opened with one token refuses every other."""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.mcp_server.hub import Hub, listen
from swarm.runtime.clis import team_server
from tests.support import hub_client as mcp

TEAM = "alpha"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[str]:
    team = Team.create(TEAM)
    for name in ("a", "b"):
        team.add_member(name, cwd=str(tmp_path))
    served = Hub(TEAM, watch=False)
    sock = listen()
    thread = threading.Thread(target=anyio.run, args=(served.serve, sock), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}{team_server.HUB_PATH}"
    served.stop("the test ended")
    thread.join(10)


def token_of(name: str) -> str:
    token = secrets.token_urlsafe(32)
    team_server.register(TEAM, name, token)
    return token


def lead_mail() -> list[tuple[str, str]]:
    box = Team(TEAM).inbox("team-lead", checked=False)
    return [(m.sender, m.text) for m in box.messages(include_archive=True)]


def everyones_mail() -> int:
    return sum(len(Team(TEAM).inbox(n, checked=False).messages(include_archive=True))
               for n in ("team-lead", "a", "b"))


def test_a_token_acts_as_the_member_that_registered_it(hub: str) -> None:
    a = token_of("a")
    opened = mcp.initialize(hub, a)
    assert opened.status == 200 and opened.session
    names = mcp.tool_names(mcp.list_tools(hub, a, opened.session))
    assert {"SendMessage", "TaskUpdate", "PermissionPrompt"} <= set(names)
    assert not {"SpawnTeammate", "TeamDelete", "AnswerPermission", "AnswerPlan",
                "TeamCreate"} & set(names)  # the lead's tools are never offered
    sent = mcp.call(hub, a, opened.session, "SendMessage",
                    {"to": "team-lead", "message": "from a", "summary": "hi"})
    assert sent.status == 200 and not (sent.message or {}).get("result", {}).get("isError")
    assert lead_mail() == [("a", "from a")]


def test_a_session_opened_with_one_token_refuses_any_other(hub: str) -> None:
    a, b = token_of("a"), token_of("b")
    opened = mcp.initialize(hub, a)
    assert opened.status == 200 and opened.session
    for other in (b, None, "made-up", team_server.token_hash(a)):
        answer = mcp.call(hub, other, opened.session, "SendMessage",
                          {"to": "team-lead", "message": "as a?", "summary": "x"})
        assert answer.status in (401, 404), (other, answer)
        assert mcp.text_of(answer) == ""
    assert everyones_mail() == 0
    # B's own token opens B's own session, where it speaks as B.
    own = mcp.initialize(hub, b)
    assert own.status == 200 and own.session != opened.session
    mcp.call(hub, b, own.session, "SendMessage", {"to": "a", "message": "from b", "summary": "x"})
    assert [(m.sender, m.text) for m in Team(TEAM).inbox("a", checked=False).messages()] == \
        [("b", "from b")]


def test_no_token_a_made_up_one_or_a_registered_hash_is_refused(hub: str) -> None:
    a = token_of("a")
    for token in (None, "", "made-up", secrets.token_urlsafe(32), team_server.token_hash(a)):
        answer = mcp.initialize(hub, token)
        assert answer.status == 401 and answer.session is None, token
    assert mcp.call(hub, None, None, "SendMessage", {"to": "team-lead", "message": "x",
                                                     "summary": "x"}).status == 401
    assert everyones_mail() == 0


def test_no_registration_makes_a_token_the_leads(hub: str) -> None:
    token = secrets.token_urlsafe(32)
    path = paths.mcp_hub_member(TEAM, "team-lead")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"member": "team-lead", "sha256": team_server.token_hash(token),
                                "pid": os.getpid(), "started_at": None}))
    assert mcp.initialize(hub, token).status == 401
    # Nor a file of one member's name that says it is another's.
    forged = paths.mcp_hub_member(TEAM, "b")
    forged.write_text(json.dumps({"member": "a", "sha256": team_server.token_hash(token),
                                  "pid": os.getpid(), "started_at": None}))
    assert mcp.initialize(hub, token).status == 401
