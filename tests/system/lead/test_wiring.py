"""`swarm lead` as a host like a teammate: its `Agent` tool runs subagents (foreground and
background) and the user's hooks apply to its own calls. Real `swarm lead --headless` processes,
the lead and its subagents talking through the real SDK to the fake Messages API."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.team.state import read_state
from tests.support.fake_anthropic import FakeAnthropic, Scripted, reply
from tests.support.helpers import wait_until, without_usage
from tests.support.lead_fixtures import lead

pytestmark = pytest.mark.usefixtures("lead_env")
WAIT = 30.0




def is_typed_subagent(body: dict[str, Any]) -> bool:
    return "# You are a subagent" in body.get("system", [{}])[0].get("text", "")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body["tools"]]


def last_content(body: dict[str, Any]) -> list[dict[str, Any]]:
    message = body["messages"][-1]
    assert message["role"] == "user"
    return message["content"]  # type: ignore[no-any-return]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in last_content(body) if b.get("type") == "tool_result"]


def lead_calls(api: FakeAnthropic) -> int:
    return sum(not is_typed_subagent(b) for b in api.messages_requests())


def write_hooks(hooks: dict[str, Any]) -> None:
    target = paths.user_settings()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"hooks": hooks}))


def test_the_lead_runs_a_foreground_reviewer_subagent_and_resumes_it(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    stopped = tmp_path / "subagent-stop.json"
    write_hooks({"SubagentStop": [{"command": f"cat > {stopped}"}]})
    sub = fake_api.route(is_typed_subagent)
    read_id = sub.push_tool_use("Read", {"file_path": "notes.txt"})
    sub.push_text("Summary: notes.txt lists alpha and beta.")
    # Resumed by the lead's SendMessage: it answers once the lead's call after SendMessage has
    # gone out, so its notification wakes the idle lead (sooner, it would ride in that call).
    sub.push(lambda body: (wait_until(lambda: lead_calls(fake_api) >= 3, WAIT)
                           and reply("No gamma in it.")))
    call = fake_api.push_tool_use("Agent", {
        "description": "summarize notes", "prompt": "Read notes.txt and summarize it.",
        "subagent_type": "code-reviewer"})
    fake_api.push_tool_use("SendMessage", {"to": "team-lead.sub-1", "message": "Any gamma?",
                                           "summary": "one more question"})
    fake_api.push_text("Asked about gamma.")
    fake_api.push_text("The notes list alpha and beta.")
    proc = lead("--team", "sub", "--keep", "What is in notes.txt?", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The notes list alpha and beta."

    bodies = fake_api.messages_requests()
    subs = [b for b in bodies if is_typed_subagent(b)]
    leads = [b for b in bodies if not is_typed_subagent(b)]
    assert len(subs) == 3 and len(leads) == 4
    assert {"Agent", "AgentStatus", "AgentStop"} <= set(tool_names(leads[0]))
    for body in subs:  # its read-only tools and Bash, never Agent nor a team tool
        assert tool_names(body) == ["Read", "Bash", "Glob", "Grep"]
    assert "`team-lead.sub-1`" in subs[0]["system"][0]["text"]
    (read,) = tool_results(subs[1])
    assert read["tool_use_id"] == read_id and "alpha" in read["content"]
    (result,) = tool_results(leads[1])  # the report is the Agent call's result
    assert result["tool_use_id"] == call and not result.get("is_error")
    report, stats = result["content"].rsplit("\n\n", 1)
    assert report == "Summary: notes.txt lists alpha and beta."
    figures = json.loads(stats)
    assert figures["agent_id"] == "team-lead.sub-1" and figures["tool_uses"] == 1
    # SendMessage to it resumes its conversation in the background; its end wakes the lead.
    (sent,) = tool_results(leads[2])
    assert sent["content"].startswith("resumed team-lead.sub-1 in the background")
    resumed = subs[2]["messages"]  # its earlier conversation, then the lead's message
    assert len(resumed) == 5 and resumed[2]["content"][0]["tool_use_id"] == read_id
    assert resumed[3]["content"][0]["text"] == "Summary: notes.txt lists alpha and beta."
    assert "Any gamma?" in resumed[4]["content"][-1]["text"]
    assert [without_usage(b["text"]) for b in last_content(leads[3])] == [
        '<subagent-notification agent_id="team-lead.sub-1" status="completed">No gamma in it.'
        "</subagent-notification>"]

    # Records: its transcript, its usage counted toward the lead's, its status.
    assert paths.subagent_transcript("sub", "team-lead", "team-lead.sub-1").exists()
    state = read_state("sub", "team-lead")
    assert state is not None and state.usage.input_tokens == 12 * 7  # 4 lead + 3 subagent calls
    (record,) = state.subagents
    assert record.status == "completed" and record.subagent_type == "code-reviewer"
    assert "lead: started team-lead.sub-1 (code-reviewer): summarize notes" in proc.stderr
    hook = json.loads(stopped.read_text())
    assert (hook["event"], hook["agent_id"], hook["subagent_id"], hook["status"]) == (
        "SubagentStop", "team-lead@sub", "team-lead.sub-1", "completed")


def test_a_background_subagent_wakes_the_idle_lead_before_the_session_ends(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    turn_over = threading.Event()

    def lead_idle() -> float:
        state = read_state("bg", "team-lead")
        return state.heartbeat if state is not None and state.state == "idle" else 0.0

    def finish_late(body: dict[str, Any]) -> Scripted:
        """Only once the lead ended its turn and its headless session is still there a beat
        later (idle, not exited: the running subagent keeps the session open)."""
        turn_over.wait(WAIT)
        since = wait_until(lead_idle, WAIT, message="the lead idle after its turn")
        wait_until(lambda: lead_idle() > since + 0.15, WAIT, message="the lead still idle")
        return reply("side job <done>")

    fake_api.route(is_typed_subagent).push(finish_late)
    fake_api.push_tool_use("Agent", {"description": "side job", "prompt": "Do the side job.",
                                     "subagent_type": "explore", "run_in_background": True})

    def turn_ends(body: dict[str, Any]) -> Scripted:
        turn_over.set()
        return reply("Started it in the background.")

    fake_api.push(turn_ends)
    fake_api.push_text("The side job is done.")
    proc = lead("--team", "bg", "Do a side job.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The side job is done."
    leads = [b for b in fake_api.messages_requests() if not is_typed_subagent(b)]
    assert len(leads) == 3
    (started,) = tool_results(leads[1])
    assert json.loads(started["content"].split("\n", 1)[0]) == {
        "agent_id": "team-lead.sub-1", "status": "running"}
    woken = last_content(leads[2])  # a turn of its own, started by the notification
    assert [without_usage(b["text"]) for b in woken] == [
        '<subagent-notification agent_id="team-lead.sub-1" status="completed">'
        "side job &lt;done&gt;</subagent-notification>"]
    assert not paths.team_dir("bg").exists()


def test_the_leads_hooks_block_its_rm_see_its_results_and_its_end(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    seen, ended = tmp_path / "post.json", tmp_path / "end.json"
    write_hooks({
        "PreToolUse": [{"matcher": "Bash", "command": (
            "grep -q '\"command\": \"rm ' && { echo 'rm is not allowed here: use git rm' >&2;"
            " exit 2; }; exit 0")}],
        "PostToolUse": [{"matcher": "Read", "command": f"cat > {seen}"}],
        "SessionEnd": [{"command": f"cat > {ended}"}]})
    fake_api.push(lambda body: reply(None, [("Bash", {"command": "rm victim.txt"}),
                                            ("Read", {"file_path": "victim.txt"})]))
    fake_api.push_text("victim.txt stays.")
    proc = lead("--team", "hooked", "Remove victim.txt.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "keep me"
    rm_result, read_result = tool_results(fake_api.messages_requests()[1])
    assert rm_result["is_error"] is True
    assert rm_result["content"] == ("permission denied: blocked by a PreToolUse hook: "
                                    "rm is not allowed here: use git rm")
    assert "keep me" in read_result["content"] and not read_result.get("is_error")
    payload = json.loads(seen.read_text())
    assert (payload["event"], payload["agent_id"], payload["cwd"], payload["tool_name"]) == (
        "PostToolUse", "team-lead@hooked", str(tmp_path), "Read")
    assert payload["tool_input"] == {"file_path": "victim.txt"}
    assert "keep me" in payload["tool_result"]["content"]
    end = json.loads(ended.read_text())
    assert (end["event"], end["agent_id"], end["reason"]) == (
        "SessionEnd", "team-lead@hooked", "session ended")


def test_the_users_tool_hooks_apply_to_the_leads_subagent_as_to_the_lead(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    """One `ToolHooks` for every host: the lead's subagent's Bash rm is blocked by PreToolUse,
    and its Read (which ran) is seen by PostToolUse, whose exit 2 adds to the result."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    seen = tmp_path / "post.jsonl"
    write_hooks({
        "PreToolUse": [{"matcher": "Bash", "command": (
            "grep -q '\"command\": \"rm ' && { echo 'rm is not allowed here' >&2;"
            " exit 2; }; exit 0")}],
        "PostToolUse": [{"matcher": "Bash|Read", "command": (
            f"cat >> {seen}; echo >> {seen}; echo 'noted by the hook' >&2; exit 2")}]})
    sub = fake_api.route(is_typed_subagent)
    sub.push(lambda body: reply(None, [("Bash", {"command": "rm victim.txt"}),
                                       ("Read", {"file_path": "victim.txt"})]))
    sub.push_text("victim.txt is still there.")
    fake_api.push_tool_use("Agent", {"description": "remove it", "prompt": "Remove victim.txt.",
                                     "subagent_type": "general-purpose"})
    fake_api.push_text("Done.")
    proc = lead("--team", "subhooks", "Remove victim.txt.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "keep me"

    subs = [b for b in fake_api.messages_requests() if is_typed_subagent(b)]
    rm_result, read_result = tool_results(subs[1])
    assert rm_result["is_error"] is True
    assert rm_result["content"] == ("permission denied: blocked by a PreToolUse hook: "
                                    "rm is not allowed here")
    assert read_result["content"].endswith("\n[PostToolUse hook: noted by the hook]")
    assert "keep me" in read_result["content"] and not read_result.get("is_error")
    # PostToolUse saw the call that ran, never the blocked one.
    (payload,) = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert (payload["event"], payload["agent_id"], payload["tool_name"]) == (
        "PostToolUse", "team-lead@subhooks", "Read")
    assert payload["tool_input"] == {"file_path": "victim.txt"}
    assert "keep me" in payload["tool_result"]["content"]
