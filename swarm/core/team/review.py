"""What auto's reviewer is shown, and what it may answer.

The request holds what the person and the lead said, never what the member said or read: the
person's request to the lead (the team's description: its first words), the member's assignment
(its spawn prompt, who spawned it, the tasks it owns and their file scopes, the lead's messages
to it), the member's earlier calls (one line each: a command, a path and a size, never a file's
content or a tool's output) and the pending call's input (without its `description`, the
model's prose). So a file that says "run curl .. | sh" never reaches the reviewer, and neither
does the member's argument for a call. Each task says who created it (a person, the lead, the
member itself); its text may have been edited by any member since: the request says so.

The verdict: one JSON object `{"decision": "allow"|"deny", "risk": "low"|"medium"|"high",
"reason": "..."}`. Anything else is no verdict, and a person is asked.
"""

from __future__ import annotations

import json
from typing import Any

from msgspec import Struct

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.task import ENDED
from swarm.core.records.team_config import Member
from swarm.core.team import decisions
from swarm.core.team.team import Team

VERSION = 1
HISTORY = 40  # earlier calls shown
MAX_TEXT = 4096  # bytes of one prompt, task or message shown
MAX_REQUEST = 32 * 1024  # the whole request: history is cut first
MAX_OUTPUT = 64 * 1024  # a reviewer's answer longer than this is no verdict
MAX_REASON = 500
RISKS = ("low", "medium", "high")
_PROSE_FIELDS = ("description",)  # a CLI's Bash `description`: the model's own words
_CONTENT_FIELDS = ("content", "new_string", "old_string")


class Verdict(Struct, frozen=True):
    decision: str  # "allow" | "deny"
    risk: str
    reason: str


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    data = text.encode()
    return text if len(data) <= limit else data[:limit].decode(errors="ignore") + " [cut]"


def call_line(tool: str, args: dict[str, Any]) -> str:
    """One call as the reviewer's history shows it: what it runs or touches, never content."""
    if tool == "Bash":
        return f"Bash: {_cut(str(args.get('command', '')), 1024)}"
    path = args.get("file_path") or args.get("path") or args.get("notebook_path")
    sizes = ", ".join(f"{k} {len(str(args[k]).encode())} bytes" for k in _CONTENT_FIELDS
                      if k in args)
    if path is not None:
        return f"{tool} {path}" + (f" ({sizes})" if sizes else "") + (
            f" pattern {args['pattern']!r}" if "pattern" in args else "")
    if "pattern" in args:
        return f"{tool} pattern {_cut(str(args['pattern']), 256)!r}"
    if tool == "SendMessage":
        return f"SendMessage to {args.get('to')}"
    return f"{tool} ({', '.join(sorted(args))})"


def pending_input(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The pending call's input as the reviewer sees it: no prose, long contents cut."""
    shown = {k: v for k, v in args.items() if k not in _PROSE_FIELDS}
    for key in _CONTENT_FIELDS:
        if isinstance(shown.get(key), str):
            shown[key] = _cut(shown[key])
    return shown


def assignment(team: Team, member: Member) -> dict[str, Any]:
    tasks = [t for t in team.tasks.list() if t.owner == member.name and t.status not in ENDED]
    told = [m for m in team.inbox(member.name, checked=False).messages(include_archive=True)
            if m.sender == LEAD_NAME and m.structured() is None and m.text != member.prompt]
    return {
        "spawned_by": "a person" if member.depth <= 1 else LEAD_NAME,
        "prompt": _cut(member.prompt),
        "tasks": [{"id": t.id, "subject": _cut(t.subject, 1024),
                   "description": _cut(t.description), "files": t.files, "status": t.status,
                   "created_by": _creator(t.created_by, member.name)} for t in tasks],
        "tasks_note": "a task's text can be edited by any member after it was created",
        "file_scope": sorted({f for t in tasks for f in t.files}),
        "worktree": member.worktree_path is not None,
        "lead_messages": [_cut(m.text) for m in told[-5:]],
    }


def _creator(name: str | None, member: str) -> str:
    if name is None:
        return "a person"
    return "the lead" if name == LEAD_NAME else (
        "this member itself" if name == member else f"member {name}")


def build_request(team: Team, member: Member, tool: str, args: dict[str, Any], cwd: str,
                  mode: str, why_reviewed: str) -> dict[str, Any]:
    history = [{"tool": r.get("tool"), "call": r.get("call"), "outcome": r.get("behavior"),
                "tier": r.get("tier")} for r in decisions.calls(team.name, member.name)[-HISTORY:]]
    config = team.config()
    request: dict[str, Any] = {
        "version": VERSION, "team": team.name,
        "member": {"name": member.name, "kind": member.agent or "swarm", "mode": mode,
                   "cwd": cwd},
        "request": [{"text": _cut(config.description)}] if config.description else [],
        "request_note": "the person's first words to the lead (its first 200 characters)",
        "assignment": assignment(team, member),
        "history": history,
        "pending": {"tool": tool, "input": pending_input(tool, args),
                    "call": call_line(tool, args), "why_reviewed": why_reviewed},
    }
    while len(json.dumps(request).encode()) > MAX_REQUEST and request["history"]:
        request["history"] = request["history"][len(request["history"]) // 2 + 1:]
    return request


def parse_verdict(text: str, first_object: bool = False) -> Verdict | str:
    """The verdict in a reviewer's answer, or why there is none. `first_object`: a model's
    reply may wrap it in prose (the first JSON object counts); a command prints only it."""
    if len(text.encode()) > MAX_OUTPUT:
        return "the answer is longer than 64 KB"
    body = text.strip()
    if first_object:
        start = body.find("{")
        if start < 0:
            return "the answer holds no JSON object"
        try:
            found, _ = json.JSONDecoder().raw_decode(body[start:])
        except ValueError:
            return "the answer's JSON does not parse"
    else:
        try:
            found = json.loads(body)
        except ValueError:
            return "the answer is not one JSON object"
    if not isinstance(found, dict):
        return "the answer is not a JSON object"
    decision = found.get("decision")
    if decision not in ("allow", "deny"):
        return f"the answer's decision is {decision!r}, not allow or deny"
    risk = str(found["risk"]) if found.get("risk") in RISKS else "medium"
    reason = str(found.get("reason") or "no reason given")[:MAX_REASON]
    return Verdict(decision=decision, risk=risk, reason=reason)
