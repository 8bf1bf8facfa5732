"""An argument that is not UTF-8 is bad input: exit 2 with one `swarm: error:`
line naming it, and nothing written; not exit 1 with "unexpected UnicodeEncodeError".

A shell passes bytes; Python reads the ones that are not UTF-8 as lone surrogates
(surrogateescape), which no JSON file, mailbox or Redis entry can hold.
"""

from __future__ import annotations

import os

import pytest

from swarm.core.team.team import Team
from tests.support.helpers import run_cli

BAD = os.fsdecode(b"\xff")  # '\udcff', as sys.argv holds it
BAD_MID = os.fsdecode(b"caf\xe9 au lait")  # Latin-1, not UTF-8


@pytest.mark.parametrize("args", [
    ("tasks", "add", BAD),
    ("tasks", "add", BAD_MID),
    ("tasks", "add", "ok", "--description", BAD),
    ("tasks", "add", "ok", "--owner", f"a{BAD}"),
    ("send", "alice", BAD),
    ("send", "alice", "hi", "--summary", BAD_MID),
    ("send", f"w{BAD}", "hi"),
    ("team", "create", f"t{BAD}"),
    ("team", "create", "beta", "--description", BAD_MID),
    ("team", "show", f"t{BAD}"),
    ("spawn", f"w{BAD}", "--prompt", "go", "--backend", "hidden"),
    ("spawn", "carol", "--prompt", BAD_MID, "--backend", "hidden"),
    ("inbox", "show", BAD),
])
def test_a_non_utf8_argument_exits_2_with_one_line(
        team: Team, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    mailboxes = {n: len(Team("alpha").inbox(n, checked=False).messages()) for n in ("alice", "bob", "team-lead")}
    code, out, err = run_cli(capsys, *args, *(("--team", "alpha") if args[:2] != (
        "team", "create") and args[0] != "team" else ()))
    assert code == 2, (code, out, err)
    assert err.startswith("swarm: error: ") and err.count("\n") == 1, err
    assert "not UTF-8" in err and "unexpected" not in err, err
    assert "\udcff" not in err and "\udce9" not in err
    assert team.tasks.list() == []
    assert {n: len(Team("alpha").inbox(n, checked=False).messages()) for n in mailboxes} == mailboxes
    assert sorted(m.name for m in team.members()) == ["alice", "bob", "team-lead"]
    assert [t.name for t in Team.list()] == ["alpha"]
