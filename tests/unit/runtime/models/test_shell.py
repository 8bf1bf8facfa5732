"""The offline `shell` model, step by step: what it asks for given the conversation so far."""

from __future__ import annotations

from typing import Any

from swarm.core.records.protocol import Message, ShutdownRequest, dump_structured, render_for_model
from swarm.runtime.models import load_model
from swarm.runtime.models.base import ModelReply, ModelRequest
from swarm.runtime.models.shell import ShellModel, extract_commands, extract_writes

ALL_TOOLS: list[dict[str, Any]] = [{"name": n, "description": "", "input_schema": {}}
             for n in ("Read", "Bash", "SendMessage", "TaskUpdate")]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def wrapped(text: str, sender: str = "team-lead") -> str:
    return render_for_model(Message(sender=sender, text=text, summary="s"))


def results_for(reply: ModelReply, outputs: list[tuple[str, bool]]) -> dict[str, Any]:
    blocks = []
    for use, (body, failed) in zip(reply.tool_uses(), outputs, strict=True):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use["id"], "content": body}
        if failed:
            block["is_error"] = True
        blocks.append(block)
    return {"role": "user", "content": blocks}


def step(messages: list[dict[str, Any]], tools: list[dict[str, Any]] = ALL_TOOLS) -> ModelReply:
    reply = ShellModel().complete(ModelRequest("system", messages, tools))
    messages.append({"role": "assistant", "content": reply.content})
    return reply


def test_extract_commands_fenced_blocks_then_dollar_lines() -> None:
    text = wrapped("Please:\n```sh\nmake build\nmake test\n```\n$ echo one\n  $ echo two\n"
                   "not $ this\n$ \n```python\nprint('no')\n```")
    assert extract_commands(text) == ["make build\nmake test", "echo one", "echo two"]
    assert extract_commands("```bash\nls\n```") == ["ls"]
    assert extract_commands("no commands here") == []


def test_runs_commands_reports_to_the_lead_then_ends_its_turn() -> None:
    messages = [user(wrapped("$ echo a\n$ echo b"))]
    first = step(messages)
    assert first.stop_reason == "tool_use"
    assert [(u["name"], u["input"]) for u in first.tool_uses()] == [
        ("Bash", {"command": "echo a"}), ("Bash", {"command": "echo b"})]
    messages.append(results_for(first, [("a\n", False), ("b\n", False)]))

    second = step(messages)
    (report,) = second.tool_uses()
    assert report["name"] == "SendMessage"
    assert report["input"] == {"to": "team-lead", "message": "$ echo a\na\n\n$ echo b\nb",
                               "summary": "ran 2 command(s): ok"}
    messages.append(results_for(second, [("sent", False)]))

    third = step(messages)
    assert third.stop_reason == "end_turn" and third.tool_uses() == []


def test_a_claimed_task_whose_command_fails_is_marked_failed_with_its_result() -> None:
    task = ('<task-assignment id="7" subject="check">\n$ false\n</task-assignment>\n'
            "You have claimed task #7.")
    messages = [user(task)]
    first = step(messages)
    messages.append(results_for(first, [("\n[exit code 1]", True)]))
    second = step(messages)
    send, update = second.tool_uses()
    assert send["input"]["summary"] == "ran 1 command(s): failed"
    assert update["name"] == "TaskUpdate"
    assert update["input"]["task_id"] == "7" and update["input"]["status"] == "failed"
    assert update["input"]["result"] == "$ false\n\n[exit code 1]"


def test_write_blocks_become_write_calls_before_the_commands() -> None:
    text = wrapped("```write notes/a.md\n# A\nline\n```\n$ cat notes/a.md")
    assert extract_writes(text) == [("notes/a.md", "# A\nline\n")]
    assert extract_commands(text) == ["cat notes/a.md"]
    tools = [*ALL_TOOLS, {"name": "Write", "description": "", "input_schema": {}}]
    messages = [user(text)]
    first = step(messages, tools)
    assert [(u["name"], u["input"]) for u in first.tool_uses()] == [
        ("Write", {"file_path": "notes/a.md", "content": "# A\nline\n"}),
        ("Bash", {"command": "cat notes/a.md"})]
    messages.append(results_for(first, [("permission denied: out of scope", True),
                                        ("# A\nline\n", False)]))
    (report,) = step(messages, tools).tool_uses()
    assert report["input"]["message"] == ("write notes/a.md\npermission denied: out of scope"
                                          "\n\n$ cat notes/a.md\n# A\nline")
    assert report["input"]["summary"] == "ran 2 command(s): failed"
    # Without the Write tool the block is not run (and is no shell command either).
    assert [u["name"] for u in step([user(text)]).tool_uses()] == ["Bash"]


def test_no_commands_or_no_bash_is_reported_without_running_anything() -> None:
    (send,) = step([user(wrapped("just saying hi"))]).tool_uses()
    assert send["name"] == "SendMessage" and "No shell commands found" in send["input"]["message"]

    no_bash = [t for t in ALL_TOOLS if t["name"] != "Bash"]
    (send,) = step([user(wrapped("$ rm -rf /"))], no_bash).tool_uses()
    assert "cannot run commands" in send["input"]["message"]
    assert send["input"]["summary"] == "could not run 1 command(s): no Bash tool"


def test_approves_a_shutdown_request() -> None:
    request = ShutdownRequest(reason="done")
    messages = [user(wrapped(dump_structured(request)))]
    reply = step(messages)
    (use,) = reply.tool_uses()
    assert use["name"] == "SendMessage"
    assert use["input"] == {"to": "team-lead", "message": {
        "type": "shutdown_response", "request_id": request.request_id, "approve": True}}
    messages.append(results_for(reply, [("sent", False)]))
    assert step(messages).tool_uses() == []


def test_only_the_latest_input_counts_so_it_resumes_after_a_respawn() -> None:
    # An earlier, finished exchange; then a new message: only the new commands run.
    messages = [user(wrapped("$ echo old"))]
    first = step(messages)
    messages.append(results_for(first, [("old", False)]))
    second = step(messages)
    messages.append(results_for(second, [("sent", False)]))
    step(messages)
    messages.append(user(wrapped("$ echo new")))
    (use,) = step(messages).tool_uses()
    assert use["input"] == {"command": "echo new"}


def test_load_model_picks_shell() -> None:
    model = load_model(" Shell ")
    assert isinstance(model, ShellModel) and model.name == "shell"


def test_the_shell_model_reports_a_no_op_as_one() -> None:
    model = ShellModel()
    tools = [{"name": n} for n in ("Bash", "SendMessage")]

    def summary(text: str, tool_names: list[dict[str, str]]) -> str:
        reply = model.complete(ModelRequest(system="", messages=[
            {"role": "user", "content": text}], tools=tool_names))
        (use,) = [b for b in reply.content if b.get("name") == "SendMessage"]
        return str(use["input"]["summary"])

    assert summary("hello there", tools) == "nothing to run: no shell commands in the message"
    assert summary("$ ls\n$ pwd", [{"name": "SendMessage"}]) == (
        "could not run 2 command(s): no Bash tool")

