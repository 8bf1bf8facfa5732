"""No member grants more than it has, through subagents: a subagent's tools are its type's
definition's AND its parent's. Real `swarm agent` teammates of user agent definitions
(`$SWARM_HOME/agents/*.md`) replaying `scripted:` models; the subagents replay their own
script (the Agent call's `model`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.team.worktree_view import team_worktrees
from swarm.errors import ToolError
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.tools.registry import all_tools
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until
from tests.unit.runtime.subagents.test_runner import (
    FnModel,
    Host,
    ask,
    make_repo,
    runner_with,
    text,
    tool,
)

WAIT = 30.0


def script(crew: Crew, name: str, turns: list[dict[str, Any]]) -> str:
    (crew.workdir / name).write_text(json.dumps(turns))
    return f"scripted:{name}"  # relative: resolved against the agent's cwd


def definition(name: str, front: str) -> None:
    folder = paths.user_agents_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\n{front}\n---\nYou work.\n")


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_uses": [{"name": name, "input": args}]}


def agent(crew: Crew, model: str, subagent_type: str | None = "general-purpose",
          **more: Any) -> dict[str, Any]:
    args = {"description": "side job", "prompt": "Do the side job.", "model": model, **more}
    if subagent_type:
        args["subagent_type"] = subagent_type
    return call("Agent", **args)


def results(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for e in entries if e.get("kind") == "message"
            for b in e["message"]["content"] if b.get("type") == "tool_result"]


def sub_entries(crew: Crew, parent: str, agent_id: str) -> list[dict[str, Any]]:
    path = paths.subagent_transcript(crew.team.name, parent, agent_id)
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ended(crew: Crew, parent: str, agent_id: str) -> list[dict[str, Any]] | None:
    """The subagent's transcript once it records its end (None before)."""
    if not paths.subagent_transcript(crew.team.name, parent, agent_id).exists():
        return None
    entries = sub_entries(crew, parent, agent_id)
    return entries if any(e.get("event") == "ended" for e in entries) else None


def run_teammate(crew: Crew, agent_type: str, parent_turns: list[dict[str, Any]],
                 **options: Any) -> None:
    model = script(crew, "parent.json", [*parent_turns, {"text": "Done."}])
    crew.spawn("w1", prompt="go", model=model, agent_type=agent_type, **options)
    crew.wait_idle_notes("w1", 1, timeout=WAIT)


def assert_refused(result: dict[str, Any], tool: str) -> None:
    """The subagent's call of a tool it was not given: an error naming it, and the tools it
    has, which do not include it."""
    assert result.get("is_error"), result
    content = result["content"]
    assert f"unknown tool {tool!r}" in content, content
    assert tool not in content.split("you have:", 1)[1].split(", ")


def test_a_teammate_without_bash_lends_no_bash_to_a_general_purpose_subagent(
        crew: Crew) -> None:
    """bypassPermissions: on the old code the subagent's `touch` ran without asking."""
    definition("nobash", "disallowed_tools: [Bash]")
    sub = script(crew, "sub.json", [call("Bash", command="touch pwned"), {"text": "tried"}])
    run_teammate(crew, "nobash", [agent(crew, sub)])
    assert not (crew.workdir / "pwned").exists()
    (bash,) = results(sub_entries(crew, "w1", "w1.sub-1"))
    assert_refused(bash, "Bash")
    started = sub_entries(crew, "w1", "w1.sub-1")[0]
    assert started["event"] == "started" and started["withheld_tools"] == ["Bash"]
    (result,) = results(crew.transcript("w1"))
    assert not result.get("is_error") and result["content"].startswith("tried")


def test_an_allow_list_without_bash_binds_its_subagents_under_an_allow_rule(
        crew: Crew) -> None:
    """acceptEdits with a team allow rule for `touch`: the rule never reached a Bash the
    teammate lacks; its subagent's Write (which it has) still works."""
    definition("editor", "tools: [Read, Write, Edit, Glob, Grep, Agent]")
    sub = script(crew, "sub.json", [call("Bash", command="touch pwned"),
                                    call("Write", file_path="made.txt", content="ok"),
                                    {"text": "tried"}])
    run_teammate(crew, "editor", [agent(crew, sub)], permission_mode="acceptEdits",
                 allow=("Bash(touch:*)",))
    assert not (crew.workdir / "pwned").exists()
    assert (crew.workdir / "made.txt").read_text() == "ok"
    bash, write = results(sub_entries(crew, "w1", "w1.sub-1"))
    assert_refused(bash, "Bash")
    assert not write.get("is_error"), write


def test_a_read_only_teammate_with_agent_lends_no_write(crew: Crew) -> None:
    """A read-only allow-list plus Agent: the general-purpose subagent reads, never writes."""
    definition("reader", "tools: [Read, Glob, Grep, Agent]")
    sub = script(crew, "sub.json", [call("Write", file_path="pwned", content="x"),
                                    call("Edit", file_path="notes.txt", old_string="a",
                                         new_string="b"),
                                    {"text": "tried"}])
    (crew.workdir / "notes.txt").write_text("a\n")
    run_teammate(crew, "reader", [agent(crew, sub)])
    assert not (crew.workdir / "pwned").exists()
    assert (crew.workdir / "notes.txt").read_text() == "a\n"
    write, edit = results(sub_entries(crew, "w1", "w1.sub-1"))
    assert_refused(write, "Write")
    assert_refused(edit, "Edit")


def test_an_explore_teammate_cannot_reach_write_through_agent(crew: Crew) -> None:
    """The built-in read-only `explore` type has no Agent tool at all: the call is refused and
    no subagent starts."""
    sub = script(crew, "sub.json", [call("Write", file_path="pwned", content="x")])
    run_teammate(crew, "explore", [agent(crew, sub)])
    assert not (crew.workdir / "pwned").exists()
    (result,) = results(crew.transcript("w1"))
    assert_refused(result, "Agent")
    assert not paths.subagent_transcript(crew.team.name, "w1", "w1.sub-1").exists()


def test_a_type_whose_tools_are_all_withheld_is_refused_in_one_line(crew: Crew) -> None:
    """A teammate with Bash but no file tools asks for an `explore` subagent (Read, Glob,
    Grep): nothing is left, so no subagent starts and the model is told why."""
    definition("shellonly", "tools: [Bash, Agent]")
    sub = script(crew, "sub.json", [{"text": "explored"}])
    run_teammate(crew, "shellonly", [agent(crew, sub, subagent_type="explore")])
    (result,) = results(crew.transcript("w1"))
    assert result.get("is_error"), result
    line = result["content"]
    assert "\n" not in line.strip(), line
    assert "explore" in line and "Read, Glob, Grep" in line and "you do not have" in line
    assert not paths.subagent_transcript(crew.team.name, "w1", "w1.sub-1").exists()


def test_a_fork_of_a_teammate_without_bash_has_no_bash(crew: Crew) -> None:
    """A fork gets its parent's own tool definitions: Bash is not among them."""
    definition("nobash", "disallowed_tools: [Bash]")
    # The fork's conversation holds the parent's one reply: the fork plays turn 2 of its script.
    fork = script(crew, "fork.json", [{"text": "(the parent's turn)"},
                                      call("Bash", command="touch pwned"), {"text": "tried"}])
    run_teammate(crew, "nobash", [agent(crew, fork, subagent_type=None)])
    # A fork runs in the background: its parent may be idle before the fork's turn is over.
    entries = wait_until(lambda: ended(crew, "w1", "w1.sub-1"), WAIT, message="the fork's end")
    assert not (crew.workdir / "pwned").exists()
    assert entries[0]["subagent_type"] == "fork"
    bash = results(entries)[-1]  # after the placeholder result of the parent's Agent call
    assert_refused(bash, "Bash")


def test_a_subagent_of_a_subagent_gets_nothing_either(crew: Crew) -> None:
    """A subagent never starts subagents (Agent is not among its tools), and its own Bash is
    withheld as its parent's is."""
    definition("nobash", "disallowed_tools: [Bash]")
    inner = script(crew, "inner.json", [call("Bash", command="touch pwned")])
    sub = script(crew, "sub.json", [agent(crew, inner), call("Bash", command="touch pwned"),
                                    {"text": "tried"}])
    run_teammate(crew, "nobash", [agent(crew, sub)])
    assert not (crew.workdir / "pwned").exists()
    nested, bash = results(sub_entries(crew, "w1", "w1.sub-1"))
    assert_refused(nested, "Agent")
    assert_refused(bash, "Bash")
    assert not paths.subagent_transcript(crew.team.name, "w1", "w1.sub-2").exists()


def test_a_teammate_with_bash_lends_it_and_withholds_only_what_it_lacks(crew: Crew) -> None:
    """The positive control: Bash runs in the subagent; the Write its parent lacks does not."""
    definition("nowrite", "disallowed_tools: [Write]")
    sub = script(crew, "sub.json", [call("Bash", command="touch made"),
                                    call("Write", file_path="pwned", content="x"),
                                    {"text": "made it"}])
    run_teammate(crew, "nowrite", [agent(crew, sub)])
    assert (crew.workdir / "made").exists()
    assert not (crew.workdir / "pwned").exists()
    bash, write = results(sub_entries(crew, "w1", "w1.sub-1"))
    assert not bash.get("is_error"), bash
    assert_refused(write, "Write")


def test_an_unrestricted_teammate_lends_everything_its_type_gives(crew: Crew) -> None:
    """general-purpose (no lists): its general-purpose subagent has every file and shell tool."""
    sub = script(crew, "sub.json", [call("Bash", command="touch made"),
                                    call("Write", file_path="written", content="x"),
                                    {"text": "made it"}])
    run_teammate(crew, "general-purpose", [agent(crew, sub)])
    assert (crew.workdir / "made").exists() and (crew.workdir / "written").exists()
    started = sub_entries(crew, "w1", "w1.sub-1")[0]
    assert started.get("withheld_tools", []) == []


def adder_type(crew: Crew) -> None:
    """A subagent type with its own MCP server (`calc2`: add, fail, die, nap) and nothing else."""
    from tests.support.mcp_fixtures import calc_spec

    spec = calc_spec(crew.workdir).model_dump(exclude_defaults=True)
    definition("adder", f"tools: [mcp__calc2]\nmcpServers:\n  - calc2: {json.dumps(spec)}")


def test_a_parents_disallowed_mcp_tool_binds_a_subagent_types_own_server(crew: Crew) -> None:
    """The type's own server starts, but the tool its parent's definition disallows is not
    the subagent's; the others are (a definition's allow-list narrows built-in tools only)."""
    adder_type(crew)
    definition("noadd", "disallowed_tools: [mcp__calc2__add]")
    sub = script(crew, "sub.json", [call("mcp__calc2__add", a=2, b=3),
                                    call("mcp__calc2__nap", seconds=0), {"text": "tried"}])
    run_teammate(crew, "noadd", [agent(crew, sub, subagent_type="adder")])
    add, nap = results(sub_entries(crew, "w1", "w1.sub-1"))
    assert_refused(add, "mcp__calc2__add")
    assert nap == {**nap, "content": "rested"} and not nap.get("is_error")  # the server ran it


def test_a_type_whose_own_server_its_parent_disallows_is_refused(crew: Crew) -> None:
    adder_type(crew)
    definition("nocalc", "disallowed_tools: [mcp__calc2]")
    sub = script(crew, "sub.json", [call("mcp__calc2__add", a=2, b=3), {"text": "5"}])
    run_teammate(crew, "nocalc", [agent(crew, sub, subagent_type="adder")])
    (result,) = results(crew.transcript("w1"))
    assert result.get("is_error") and "you do not have" in result["content"], result
    assert not paths.subagent_transcript(crew.team.name, "w1", "w1.sub-1").exists()


# -- the runner in-process (tests/unit/runtime/subagents/test_runner.py's host: `lacks` what it lends not) -----

@pytest.fixture
def host(team: Team, tmp_path: Path) -> Host:
    return Host(team, tmp_path)


def test_the_withheld_tools_are_named_in_the_subagents_prompt(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    host.lacks = {"Bash", "Edit"}
    model = FnModel(text("done"))
    result = runner_with(host, monkeypatch, model).start(ask())
    assert not result.is_error, result.content
    (request,) = model.requests
    assert [t["name"] for t in request.tools] == ["Read", "Write", "Glob", "Grep", "SendMessage"]
    assert ("Not yours, as `alice` does not have them (a subagent has only tools its parent"
            " has): Edit, Bash.") in request.system


def test_a_refused_type_leaves_no_worktree_and_no_record(
        team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = Host(team, make_repo(tmp_path / "repo"))
    host.lacks = {"Read", "Glob", "Grep"}
    model = FnModel()
    runner = runner_with(host, monkeypatch, model)
    with pytest.raises(ToolError, match=r"^subagent_type 'explore' is refused: its tools \(Read,"
                       r" Glob, Grep\) are all ones you do not have"):
        runner.start(ask("explore", isolation="worktree"))
    assert model.requests == [] and runner.records() == []
    assert team_worktrees(team) == []
    listed = subprocess.run(["git", "worktree", "list"], cwd=host.cwd, capture_output=True,
                            text=True, check=True).stdout
    assert len(listed.splitlines()) == 1, listed


def test_a_fork_runs_no_tool_its_parent_no_longer_lends(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    every = all_tools()
    user = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    host.loop.last_request = ModelRequest("parent", [user],
                                          [every["Read"].spec(), every["Bash"].spec()])
    host.loop.messages = [user, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_a", "name": "Agent", "input": {}}]}]
    host.lacks = {"Bash"}  # e.g. a teammate's MCP tools changed since that request
    model = FnModel(tool("Bash", command=f"touch {host.cwd / 'pwned'}"), text("tried"))
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask(None))
    wait_until(runner.has_arrivals, 10)  # a fork runs in the background: its notification
    assert not (host.cwd / "pwned").exists()
    assert [t["name"] for t in model.requests[0].tools] == ["Read", "Bash"]  # as sent: cached
    refused = model.requests[1].messages[-1]["content"][0]
    assert refused["is_error"] and "Bash is not yours" in refused["content"]


def test_the_lead_lends_everything_and_a_teammate_what_its_definition_gives() -> None:
    from swarm.core.agents.agent_definition import AgentDefinition
    from swarm.core.agents.definitions import lends

    tools = {"Read": object(), "Agent": object(), "mcp__calc__add": object()}
    plain = AgentDefinition(name="x", tools=["Read", "Agent"])
    assert [n for n in ("Read", "Bash", "mcp__calc__add", "mcp__own__x")
            if lends(plain, tools, n)] == ["Read", "mcp__calc__add", "mcp__own__x"]
    strict = AgentDefinition(name="y", disallowed_tools=["mcp__own", "mcp__calc__die"])
    assert [n for n in ("mcp__own__x", "mcp__calc__die", "mcp__calc__add", "mcp__other__y")
            if lends(strict, tools, n)] == ["mcp__calc__add", "mcp__other__y"]
    from swarm.lead.process import Lead

    assert Lead.lends(object(), "Bash")  # type: ignore[arg-type]


def test_an_approval_for_a_tool_only_a_subagent_had_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """ops.approvals: a member with Agent but no Bash has no Bash through a subagent either."""
    from tests.unit.ops.test_approvals import forge, refused

    work = tmp_path / "work"
    work.mkdir()
    definition("reader2", "tools: [Read, Glob, Grep, Agent]")
    team = Team.create("forge")
    team.add_member("careful", cwd=str(work), agent_type="reader2")
    rid = forge(team, "Bash", {"command": "ls"}, sender="careful")
    refused(capsys, team, rid, "--always", expect="careful has no tool 'Bash'")
    refused(capsys, team, rid, expect="careful has no tool 'Bash'")
