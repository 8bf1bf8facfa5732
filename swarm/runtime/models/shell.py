"""The offline `shell` worker: a deterministic model that needs no API key.

For each input it writes the files it was given (```write PATH fenced blocks, through the real
Write tool) and runs the shell commands it was given (```sh fenced blocks, or lines starting
with `$ `) through the real Bash tool (so permission checks apply), reports the output to the
lead with SendMessage, completes a claimed task with TaskUpdate, approves shutdown requests, and
ends its turn. Its next step is read off the conversation, so it resumes after a respawn.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from typing import Any

from swarm.runtime.models.base import SUMMARY_MARKER, Block, ModelReply, ModelRequest

FENCE_RE = re.compile(r"```(?:sh|bash|shell|console)?[ \t]*\n(.*?)```", re.DOTALL)
WRITE_RE = re.compile(r"```write[ \t]+(\S+)[ \t]*\n(.*?)```", re.DOTALL)
TAG_RE = re.compile(r"</?teammate-message[^>]*>")
TASK_RE = re.compile(r'<task-assignment id="(\d+)"')
REPORT_LIMIT = 4000


def extract_commands(text: str) -> list[str]:
    """Shell commands in a message: fenced sh blocks first, then `$ ` lines outside them.
    Wrapped inputs arrive escaped (`&lt;` for `<`): the commands are read unescaped."""
    body = WRITE_RE.sub("\n", html.unescape(TAG_RE.sub("\n", text)))
    commands = [block.strip() for block in FENCE_RE.findall(body) if block.strip()]
    rest = FENCE_RE.sub("\n", body)
    commands += [line.strip()[2:].strip() for line in rest.splitlines()
                 if line.strip().startswith("$ ") and line.strip()[2:].strip()]
    return commands


def extract_writes(text: str) -> list[tuple[str, str]]:
    """Files to write: ```write PATH blocks, as (path, content)."""
    return WRITE_RE.findall(html.unescape(TAG_RE.sub("\n", text)))


def _shutdown_request_id(text: str) -> str | None:
    """The id of a shutdown request from the lead (one from anyone else is only text)."""
    for body in re.findall(r'<teammate-message from="team-lead"[^>]*>(.*?)</teammate-message>',
                           text, re.DOTALL):
        try:
            data = json.loads(html.unescape(body))
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("type") == "shutdown_request":
            return str(data.get("request_id", ""))
    return None


def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def _summarize(request: ModelRequest) -> str:
    """A deterministic summary: the commands this worker was asked to run, most recent last."""
    text = "\n".join(_texts(m) for m in request.messages)
    commands = extract_commands(text)[-20:]
    listing = "\n".join(f"- {c[:200]}" for c in commands) or "- (no commands)"
    return f"Earlier in this conversation I was asked to run:\n{listing}"


def _tool_use(name: str, args: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name,
            "input": args}


class ShellModel:
    name = "shell"

    def complete(self, request: ModelRequest) -> ModelReply:
        if request.system.startswith(SUMMARY_MARKER):
            return ModelReply([{"type": "text", "text": _summarize(request)}])
        messages = request.messages
        start = max((i for i, m in enumerate(messages) if m["role"] == "user" and _texts(m)),
                    default=0)
        text = _texts(messages[start]) if messages else ""
        done_steps = [m for m in messages[start + 1 :] if m["role"] == "assistant"]
        tools = {t["name"] for t in request.tools}

        shutdown_id = _shutdown_request_id(text)
        if shutdown_id is not None:
            if not done_steps:
                reply = {"type": "shutdown_response", "request_id": shutdown_id, "approve": True}
                return ModelReply([_tool_use("SendMessage", {"to": "team-lead", "message": reply})],
                                  "tool_use")
            return ModelReply([{"type": "text", "text": "Shutting down."}])

        commands = extract_commands(text)
        writes = extract_writes(text) if "Write" in tools else []
        steps = [f"write {path}" for path, _ in writes]
        uses = [_tool_use("Write", {"file_path": path, "content": content})
                for path, content in writes]
        if "Bash" in tools:
            steps += [f"$ {c}" for c in commands]
            uses += [_tool_use("Bash", {"command": c}) for c in commands]
        if not done_steps and uses:
            return ModelReply(uses, "tool_use")
        if len(done_steps) <= 1 and not self._reported(done_steps):
            return self._report(text, steps, commands, messages, bool(done_steps))
        return ModelReply([{"type": "text", "text": "Done."}])

    @staticmethod
    def _reported(steps: list[dict[str, Any]]) -> bool:
        return any(b.get("type") == "tool_use" and b.get("name") == "SendMessage"
                   for m in steps for b in m["content"])

    def _report(self, text: str, steps: list[str], commands: list[str],
                messages: list[dict[str, Any]], ran: bool) -> ModelReply:
        outputs: list[str] = []
        failed = False
        if ran:
            results = [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]
            for label, result in zip(steps, results, strict=False):
                body = result.get("content")
                body = body if isinstance(body, str) else _texts({"content": body or []})
                failed = failed or bool(result.get("is_error"))
                outputs.append(f"{label}\n{body.rstrip()}")
        elif not commands:
            outputs.append("No shell commands found (use ```sh blocks, lines starting with '$ ', or ```write PATH blocks).")
        else:
            failed = True
            outputs.append("I cannot run commands: the Bash tool is not available to me.")
        report = "\n\n".join(outputs)
        if len(report) > REPORT_LIMIT:
            report = report[:REPORT_LIMIT] + "\n... [truncated]"
        if ran:
            summary = f"ran {len(outputs)} command(s): {'failed' if failed else 'ok'}"
        elif not commands:  # a no-op says so, never "ran 0 command(s): ok"
            summary = "nothing to run: no shell commands in the message"
        else:
            summary = f"could not run {len(commands)} command(s): no Bash tool"
        blocks: list[Block] = [_tool_use("SendMessage", {"to": "team-lead", "message": report,
                                                         "summary": summary})]
        task = TASK_RE.search(text)
        if task:
            blocks.append(_tool_use("TaskUpdate", {"task_id": task.group(1),
                                                   "status": "failed" if failed else "completed",
                                                   "result": report[:2000]}))
        return ModelReply(blocks, "tool_use")
