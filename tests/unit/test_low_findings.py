"""The low findings of the red-team pass, each reproduced: a colour that breaks
out of the report's `style=`, Write/Edit taking a path from anything but `file_path`, a ref that
git reads as an option, subagents without a cap, and `swarm send` of nothing or of bytes that
are not UTF-8."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from swarm.core.agents.definitions import load_definitions
from swarm.core.records.names import LEAD_NAME, validate_color
from swarm.core.team.team import Team
from swarm.core.team.worktrees import create, finish, record_fields, record_of
from swarm.errors import BadInputError, ToolError
from swarm.ops.merge import merge
from swarm.ops.report.build import build_report
from swarm.ops.report.html import render_html
from swarm.runtime.models.base import ModelReply, ModelRequest
from swarm.runtime.tools.base import ToolContext, run_tool
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.turn.hooks import AllowAll
from swarm.runtime.turn.loop import Loop
from tests.support.agent_fixtures import SWARM
from tests.support.git_helpers import branches, git, init_repo
from tests.support.helpers import run_cli as run
from tests.support.helpers import wait_until
from tests.unit.runtime.subagents.test_runner import FnModel, Host, ask, runner_with, text

BREAKOUT = '#"><!--'




def one_error(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("swarm: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]


# -- colours ------------------------------------------------------------------------------------
def test_a_colour_is_a_palette_name_or_rrggbb() -> None:
    assert validate_color("blue") == "blue"
    assert validate_color("Bright_Green") == "bright_green"
    assert validate_color("#12AB9f") == "#12ab9f"
    assert validate_color("purple") == "magenta"  # Claude Code's agent colours are read too
    for bad in (BREAKOUT, "", "#12ab9", "#12ab9fz", "red;x", "javascript:", "#fff"):
        with pytest.raises(BadInputError, match="colou?r"):
            validate_color(bad)


def test_spawn_with_a_bad_colour_is_exit_2_and_registers_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    team = Team.create("alpha")
    code, _, err = run(capsys, "spawn", "w", "--team", "alpha", "--model", "shell",
                       "--backend", "hidden", "--color", BREAKOUT)
    assert code == 2
    one_error(err, "colour")
    assert [m.name for m in team.members()] == [LEAD_NAME]
    with pytest.raises(BadInputError):
        team.add_member("w", color=BREAKOUT)  # the core refuses it too (SpawnTeammate's way)
    assert [m.name for m in team.members()] == [LEAD_NAME]


@pytest.mark.usefixtures("trust_projects")
def test_a_definitions_bad_colour_is_a_problem_a_good_one_loads(tmp_path: Path) -> None:
    agents = tmp_path / ".swarm" / "agents"
    agents.mkdir(parents=True)
    (agents / "bad.md").write_text(f"---\ncolor: '{BREAKOUT}'\n---\nbody\n")
    (agents / "good.md").write_text("---\ncolor: '#12AB9F'\n---\nbody\n")
    loaded = load_definitions(tmp_path)
    assert "bad" not in loaded.definitions
    assert [p.field for p in loaded.problems] == ["color"]
    assert loaded.definitions["good"].color == "#12ab9f"


def test_the_report_never_lets_a_colour_on_disk_out_of_its_attribute(team: Team) -> None:
    team.update_member("alice", color=BREAKOUT)  # as an old or hand-edited team file has it
    page = render_html(build_report("alpha"))
    assert '"><!--' not in page
    assert "background:#6b7280" in page  # the default colour instead


# -- Write and Edit take file_path, only ----------------------------------------------------------
@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    team = Team.create("tools")
    team.add_member("w1")
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "a.py").write_text("old\n")
    return ToolContext(team=team, name="w1", cwd=work)


BAD_PATHS: list[Any] = [0, False, "", "  ", None, ["src/a.py"], {"p": 1}]


@pytest.mark.parametrize("tool", ["Write", "Edit", "Read"])
def test_the_file_tools_take_a_non_empty_string_file_path_only(
        ctx: ToolContext, tool: str) -> None:
    for bad in [*BAD_PATHS, "missing"]:
        args: dict[str, Any] = {"path": "src/a.py", "content": "new\n", "old_string": "old",
                                "new_string": "new"}
        if bad != "missing":
            args["file_path"] = bad
        result = run_tool(all_tools()[tool], args, ctx)
        assert result.is_error and "file_path" in result.content, (bad, result.content)
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["src"]  # no `0`, no `False`
    assert (ctx.cwd / "src" / "a.py").read_text() == "old\n"  # `path` was never used


class Calls:
    def __init__(self, uses: list[dict[str, Any]]) -> None:
        self.uses = uses
        self.name = "calls"

    def complete(self, request: ModelRequest) -> ModelReply:
        if request.messages[-1]["content"][0].get("type") == "tool_result":
            return ModelReply([{"type": "text", "text": "ok"}])
        return ModelReply(self.uses, "tool_use")


def test_a_bad_file_path_is_refused_before_any_permission_is_asked(ctx: ToolContext) -> None:
    asked: list[str] = []

    class Recording(AllowAll):
        def check(self, tool: Any, args: dict[str, Any], use_id: str,
                  must_ask: str | None = None) -> Any:
            asked.append(use_id)
            return super().check(tool, args, use_id)

    uses = [{"type": "tool_use", "id": f"u{i}", "name": name,
             "input": {"file_path": bad, "path": "src/a.py", "content": "x",
                       "old_string": "old", "new_string": "x"}}
            for i, (name, bad) in enumerate([("Write", 0), ("Write", False), ("Edit", "")])]
    loop = Loop(model=Calls(uses), tools=all_tools(), system="s", ctx=ctx, permits=Recording())
    loop.run([{"type": "text", "text": "go"}])
    results = loop.messages[2]["content"]
    assert all(r.get("is_error") and "file_path" in r["content"] for r in results), results
    assert asked == []  # nobody was asked about a call that names no file
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["src"]


# -- git never reads a ref as an option ---------------------------------------------------------
def test_a_ref_named_like_an_option_is_refused_or_taken_literally(
        team: Team, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    record = create(repo, "alpha", "w")
    team.add_member("w", **record_fields(record))
    (record.path / "b.txt").write_text("work\n")
    git(record.path, "add", "-A")
    git(record.path, "commit", "-q", "-m", "work")
    git(repo, "update-ref", "refs/heads/-evil", "HEAD")  # git itself cannot name a branch so
    with pytest.raises(BadInputError, match="not a valid branch name"):
        merge(team, "w", into="-evil")
    with pytest.raises(BadInputError, match="not a valid branch name"):
        merge(team, "w", into="a..b")
    assert "-evil" in branches(repo)
    # A branch read back from the team file is passed after `--`: a literal name, never `-D`.
    git(repo, "update-ref", "refs/heads/-D", "main")
    evil = record_of(team.update_member("w", worktree_branch="-D"))
    assert evil is not None
    git(record.path, "reset", "-q", "--hard", "HEAD~1")  # nothing unmerged: the branch may go
    done = finish(evil, "w")
    assert done.removed and done.branch_deleted
    assert "-D" not in branches(repo) and "-evil" in branches(repo)


# -- the subagent cap ---------------------------------------------------------------------------
def test_at_most_swarm_max_subagents_run_at_once(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_SUBAGENTS", "2")
    gate = threading.Event()
    runner = runner_with(host, monkeypatch, FnModel(*[lambda r: (gate.wait(10), text("x"))[1]]
                                                     * 3))
    try:
        assert not runner.start(ask(background=True)).is_error
        assert not runner.start(ask(background=True)).is_error
        with pytest.raises(ToolError) as refused:  # the Agent tool's error result
            runner.start(ask(background=True))
        assert "2 subagents are running" in str(refused.value)
        assert "limit is 2 at once (SWARM_MAX_SUBAGENTS)" in str(refused.value)
        assert len(runner.records()) == 2  # the third never started
    finally:
        gate.set()
    wait_until(lambda: not any(s.status == "running" for s in runner.records()), 10)
    assert not runner.start(ask(background=True)).is_error  # room again once they ended


@pytest.fixture
def host(team: Team, tmp_path: Path) -> Host:
    return Host(team, tmp_path)


# -- swarm send: nothing, or not UTF-8 ----------------------------------------------------------
def test_send_of_an_empty_message_is_exit_2_and_sends_nothing(
        team: Team, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for args, stdin in ((("",), None), (("   \n",), None), (("-",), "")):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        code, _, err = run(capsys, "send", "team-lead", *args, "--team", "alpha")
        assert code == 2, err
        one_error(err, "empty")
    assert Team("alpha").inbox(LEAD_NAME, checked=False).messages(include_archive=True) == []


def test_send_of_stdin_that_is_not_utf8_is_exit_2_and_sends_nothing(team: Team) -> None:
    proc = subprocess.run([SWARM, "send", "team-lead", "-", "--team", "alpha"],
                          input=b"\xff\xfe", capture_output=True, timeout=30,
                          env={**os.environ})
    assert proc.returncode == 2, proc.stderr
    one_error(proc.stderr.decode(), "UTF-8")
    assert Team("alpha").inbox(LEAD_NAME, checked=False).messages(include_archive=True) == []


def test_send_message_tool_refuses_an_empty_message(tmp_path: Path) -> None:
    team = Team.create("tools")
    team.add_member("w1")
    ctx = ToolContext(team=team, name="w1", cwd=tmp_path)
    result = run_tool(all_tools()["SendMessage"],
                      {"to": LEAD_NAME, "message": " ", "summary": "nothing"}, ctx)
    assert result.is_error and "empty" in result.content
    assert Team("tools").inbox(LEAD_NAME, checked=False).messages() == []
