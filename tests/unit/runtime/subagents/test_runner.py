"""The subagent runner in-process, with a small `SubagentHost` and models written in the test:
the cases an end-to-end run cannot stage exactly (a subagent that raises, auto-background,
asking in the background, an interrupt, a spent budget), and the pieces (Waker, cache marks)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.store.file.watch import FileWatcher
from swarm.core.store.waker import Waker
from swarm.core.team.team import Team
from swarm.core.team.worktree_view import team_worktrees
from swarm.core.team.worktrees import (
    kept_path,
    leave_team,
)
from swarm.errors import BadInputError, ToolError, TurnInterrupted
from swarm.runtime.models import parse_model_spec
from swarm.runtime.models.anthropic_model import build_params
from swarm.runtime.models.base import ModelReply, ModelRequest
from swarm.runtime.subagents import runner as runner_module
from swarm.runtime.subagents.tools import AgentTool, SubagentRequest, subagent_tools
from swarm.runtime.subagents.worktree import finish_worktree, start_worktree
from swarm.runtime.tools.base import ToolContext, run_tool
from tests.support.helpers import wait_until, without_usage
from tests.support.subagent_host import (
    FnModel,
    Host,
    ask,
    forkable,
    make_repo,
    runner_with,
    text,
    tool,
)


@pytest.fixture
def host(team: Team, tmp_path: Path) -> Host:
    return Host(team, tmp_path)


def test_a_subagent_that_raises_is_a_tool_error(host: Host, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    def boom(request: ModelRequest) -> ModelReply:
        raise RuntimeError("boom")

    runner = runner_with(host, monkeypatch, FnModel(boom))
    result = runner.start(ask())
    assert result.is_error
    assert result.content.startswith("subagent alice.sub-1 failed: it crashed: RuntimeError: boom")
    (info, said) = host.stopped[0]  # the SubagentStop event
    assert info.status == "failed" and "boom" in said
    assert [s.status for s in host.state["subagents"]] == ["failed"]


def test_foreground_moves_to_the_background_and_notifies(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_AUTO_BACKGROUND_S", "0.2")
    gate = threading.Event()
    runner = runner_with(host, monkeypatch, FnModel(lambda r: (gate.wait(10), text("late"))[1]))
    with FileWatcher([(host.cwd, "nothing")], runner.waker) as watcher:
        result = runner.start(ask())
        assert not result.is_error
        assert json.loads(result.content.splitlines()[0]) == {"agent_id": "alice.sub-1",
                                                              "status": "running"}
        assert "moved to the background" in result.content
        assert not runner.has_arrivals()
        gate.set()
        assert watcher.wait(10)  # the parent's idle wait wakes
    assert [without_usage(b["text"]) for b in runner.take_arrivals()] == [
        '<subagent-notification agent_id="alice.sub-1" status="completed">late'
        "</subagent-notification>"]
    assert runner.take_arrivals() == []


def test_asking_goes_to_the_parents_asker_in_the_foreground_only(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    target = host.cwd / "out.txt"
    model = FnModel(tool("Write", file_path=str(target), content="x"), text("wrote"),
                    tool("Write", file_path=str(target), content="y"), text("tried"))
    runner = runner_with(host, monkeypatch, model)
    assert not runner.start(ask()).is_error
    assert target.read_text() == "x"  # default mode asks; the parent's asker said yes
    runner.start(ask(background=True))
    wait_until(runner.has_arrivals, 10)
    denied = model.requests[-1].messages[-1]["content"][0]
    assert denied["is_error"] and "nobody can be asked here" in denied["content"]
    assert target.read_text() == "x"


def test_interrupting_the_parent_stops_a_foreground_subagent(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    runner = runner_with(host, monkeypatch, FnModel(lambda r: (gate.wait(10), text("x"))[1]))
    host.interrupt_after = 1
    monkeypatch.setattr(runner_module, "WAIT_SLICE", 0.05)
    with pytest.raises(TurnInterrupted):
        runner.start(ask())
    gate.set()
    (record,) = host.state["subagents"]
    assert record.status == "stopped"
    assert "interrupted" in host.stopped[0][1]


def test_a_spent_budget_stops_subagents(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    host.limit = "budget_exhausted"
    model = FnModel()
    runner = runner_with(host, monkeypatch, model)
    result = runner.start(ask())
    assert model.requests == []
    assert result.is_error and "ended early: budget_exhausted" in result.content


def test_subagent_send_message_reaches_only_its_parent(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    model = FnModel(tool("SendMessage", to="bob", message="hi", summary="s"),
                    tool("SendMessage", to="alice", message="half way <there>", summary="p"),
                    text("done"))
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask())
    refused = model.requests[1].messages[-1]["content"][0]
    assert refused["is_error"] and "only `alice`" in refused["content"]
    assert [without_usage(b["text"]) for b in runner.take_arrivals()] == [
        '<subagent-message agent_id="alice.sub-1" summary="p">half way &lt;there&gt;'
        "</subagent-message>"]


def test_ids_status_stop_and_old_ids(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    paths.subagents_dir(host.team.name, "alice").mkdir(parents=True)
    paths.subagent_transcript(host.team.name, "alice", "alice.sub-4").write_text("")
    gate = threading.Event()
    runner = runner_with(host, monkeypatch, FnModel(lambda r: (gate.wait(10), text("x"))[1]))
    assert "alice.sub-5" in runner.start(ask(background=True)).content  # never reuses an id
    assert "[running, background] general-purpose: job" in runner.status(None).content
    with pytest.raises(ToolError, match="ran in an earlier process"):
        runner.stop("alice.sub-4", "why")
    with pytest.raises(ToolError, match=r"no subagent 'bob.sub-1' \(yours: alice.sub-5\)"):
        runner.status("bob.sub-1")
    assert runner.stop("alice.sub-5", "stopped by test").content == "stopped alice.sub-5"
    with pytest.raises(ToolError, match="is not running"):
        runner.stop("alice.sub-5", "again")
    gate.set()
    assert "stopped by test" in runner.take_arrivals()[0]["text"]


def test_fork_needs_a_request_to_copy(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = runner_with(host, monkeypatch, FnModel())
    with pytest.raises(ToolError, match="nothing to fork yet"):
        runner.start(ask(None))


def test_the_agent_tools_refuse_inside_a_subagent(team: Team, tmp_path: Path) -> None:
    ctx = ToolContext(team=team, name="alice", cwd=tmp_path)  # no runner: a subagent's context
    for item in subagent_tools():
        result = run_tool(item, {"description": "d", "prompt": "p", "agent_id": "x"}, ctx)
        assert result.is_error and "a fork cannot fork" in result.content


def test_request_parsing() -> None:
    def parse(args: dict[str, Any]) -> SubagentRequest:
        return SubagentRequest.parse(AgentTool().parse(args))

    with pytest.raises(ToolError, match="prompt must not be empty"):
        parse({"description": "d", "prompt": " "})
    with pytest.raises(ToolError, match="description is required"):
        parse({"description": " ", "prompt": "p"})
    with pytest.raises(ToolError, match="Invalid input for Agent: description: Field required"):
        parse({"prompt": "p"})
    with pytest.raises(ToolError, match="run_in_background: Input should be a valid boolean"):
        parse({"description": "d", "prompt": "p", "run_in_background": "soon"})
    with pytest.raises(ToolError, match="isolation: Input should be 'worktree'"):
        parse({"description": "d", "prompt": "p", "isolation": "docker"})
    with pytest.raises(ToolError, match="prompt: Input should be a valid string"):
        parse({"description": "d", "prompt": 5})
    fork = parse({"description": "d", "prompt": "p", "subagent_type": "", "isolation": ""})
    assert fork.subagent_type is None and fork.isolation is None


def test_model_names() -> None:
    for good in ("sonnet", "Opus", "claude-sonnet-4-5", "shell", "scripted:x.json",
                 "openai:gpt-5-mini", "ollama:qwen3-coder:30b"):
        assert parse_model_spec(good).text == good
    for bad in ("gpt-4", "", "claude- x"):
        with pytest.raises(BadInputError, match="unknown model"):
            parse_model_spec(bad)


def test_a_fork_mark_repeats_the_parents_last_breakpoint() -> None:
    convo = [{"role": "user", "content": [{"type": "text", "text": "a"}]},
             {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
             {"role": "user", "content": [{"type": "text", "text": "c"}]}]
    parent = build_params("m", ModelRequest("s", convo[:1], []))
    fork = build_params("m", ModelRequest("s", convo, [], cache_marks=(0,)))
    assert fork["messages"][0] == parent["messages"][0]
    assert fork["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in fork["messages"][1]["content"][-1]
    assert "cache_control" in fork["messages"][2]["content"][-1]
    assert convo[0]["content"][0] == {"type": "text", "text": "a"}  # never mutated


def test_waker_ends_a_wait_once(tmp_path: Path) -> None:
    waker = Waker()
    with FileWatcher([(tmp_path, "x")], waker) as watcher:
        assert not watcher.wait(0.05)
        waker.set()
        waker.set()
        started = time.monotonic()
        assert watcher.wait(5)
        assert time.monotonic() - started < 1
        assert not watcher.wait(0.05)  # both sets were one wake-up
    waker.close()


def test_waker_in_poll_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_NO_INOTIFY", "1")
    waker = Waker()
    with FileWatcher([(tmp_path, "x")], waker) as watcher:
        threading.Timer(0.05, waker.set).start()
        assert watcher.wait(5)
    waker.close()


def test_subagent_worktrees_removed_clean_kept_through_team_delete(team: Team, tmp_path: Path
                                                                    ) -> None:
    repo = make_repo(tmp_path / "repo")
    clean = start_worktree(team.name, "alice.sub-1", repo)
    assert clean.branch == f"swarm/{team.name}/alice.sub-1" and clean.path.is_dir()
    assert finish_worktree(clean) is False and not clean.path.exists()
    work = start_worktree(team.name, "alice.sub-2", repo)
    (work.path / "new.txt").write_text("work\n")
    assert finish_worktree(work) is True and work.path.is_dir()
    (view,) = [v for v in team_worktrees(team) if v.member == "alice.sub-2"]
    assert view.dirty == ["new.txt"] and view.branch == work.branch

    (done,) = leave_team(team)  # `team delete`: moved out of the team directory, not lost
    assert not done.removed and Path(done.path) == kept_path(team.name, "alice.sub-2")
    assert (Path(done.path) / "new.txt").read_text() == "work\n"
    listed = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    assert done.path in listed and str(work.path) not in listed


def test_worktree_isolation_outside_a_repository(team: Team, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"^isolation: worktree: .* is not inside a git repository"
                       r".*start the subagent without isolation"):
        start_worktree(team.name, "alice.sub-1", tmp_path)


def test_a_definitions_mode_is_capped_by_the_parents_and_post_tool_use_sees_what_ran(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "bold.md").write_text("---\npermissionMode: bypassPermissions\nbackground: true\n"
                                    "---\nYou write.\n")
    (agents / "meek.md").write_text("---\npermissionMode: plan\n---\nYou look.\n")
    target = host.cwd / "out.txt"
    model = FnModel(tool("Read", file_path=str(host.cwd)), tool("Write", file_path=str(target),
                    content="x"), text("tried"))
    runner = runner_with(host, monkeypatch, model)
    started = runner.start(ask("bold"))  # background by its definition
    assert "It works in the background" in started.content
    wait_until(runner.has_arrivals, 10)
    # Its definition asks for bypassPermissions; its parent is in default: default it is, and
    # in the background nobody can be asked, so the Write is denied.
    denied = model.requests[-1].messages[-1]["content"][0]
    assert denied["is_error"] and "nobody can be asked here" in denied["content"]
    assert not target.exists()
    assert host.tool_hooks.ran == ["Read"]  # PostToolUse: the call that ran, not the denied one
    # Its stop is recorded after its notification is queued: wait for the record itself.
    (info,) = wait_until(lambda: [i for i, _ in host.stopped], 10, message="the stop recorded")
    assert info.subagent_type == "bold" and info.background


@pytest.mark.parametrize("background", [None, False])
def test_a_fork_always_runs_in_the_background(
        host: Host, monkeypatch: pytest.MonkeyPatch, background: bool | None) -> None:
    gate = threading.Event()
    runner = runner_with(host, monkeypatch, FnModel(lambda r: (gate.wait(10), text("forked"))[1]))
    forkable(host)
    result = runner.start(ask(None, background=background))  # returns while the fork works
    assert json.loads(result.content.splitlines()[0]) == {"agent_id": "alice.sub-1",
                                                          "status": "running"}
    assert "background" in result.content and not gate.is_set()
    assert "[running, background] fork" in runner.status(None).content
    gate.set()
    wait_until(runner.has_arrivals, 10)
    assert [without_usage(b["text"]) for b in runner.take_arrivals()] == [
        '<subagent-notification agent_id="alice.sub-1" status="completed">forked'
        "</subagent-notification>"]


def test_status_and_notification_summarize_recent_activity(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    notes = host.cwd / "notes.txt"
    notes.write_text("x\n")
    model = FnModel(*(tool("Bash", command=f"echo step {n}") for n in range(1, 4)),
                    tool("Read", file_path=str(notes)),
                    lambda r: (gate.wait(10), text("all read"))[1])
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask(background=True))
    wait_until(lambda: len(model.requests) == 5, 10)  # its last call ran; it waits on the gate
    status = runner.status("alice.sub-1").content.splitlines()
    # The last 3 calls, newest last, one line each, and how long it has run.
    assert status[1:] == ['  recent: Bash "echo step 2"', '  recent: Bash "echo step 3"',
                          f'  recent: Read "{notes}"']
    assert re.search(r"\(4 tool uses, \d+ tokens, \d+s\)", status[0])
    wait_until(lambda: host.state["subagents"][0].recent[-1] == f'Read "{notes}"', 10)
    gate.set()
    wait_until(runner.has_arrivals, 10)
    (note,) = [b["text"] for b in runner.take_arrivals()]
    assert (f' recent="Bash &quot;echo step 2&quot; | Bash &quot;echo step 3&quot; | Read'
            f' &quot;{notes}&quot;">all read</subagent-notification>') in note
    assert re.search(r' duration_s="\d+"', note)


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

