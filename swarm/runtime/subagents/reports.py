"""What a subagent says to its parent: the `Agent` call's result (foreground), the
`<subagent-notification>` (background), and `AgentStatus`'s lines with its recent activity
(its last tool calls, one line each, and how long this run has taken)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from swarm.core.records.protocol import escape
from swarm.runtime.tools.base import ToolResult

if TYPE_CHECKING:
    from swarm.runtime.subagents.subagent import Run, Subagent


def usage_of(sub: Subagent) -> dict[str, int]:
    """A subagent's tokens, as its result and notification report them."""
    used = sub.usage
    return {"input_tokens": used.input_tokens, "output_tokens": used.output_tokens,
            "cache_read_input_tokens": used.cache_read_input_tokens,
            "cache_creation_input_tokens": used.cache_creation_input_tokens}


def result(sub: Subagent, run: Run) -> ToolResult:
    """A foreground `Agent` call's result: the final report and its figures."""
    info = sub.info
    stats = {"agent_id": info.agent_id, "agent_type": info.subagent_type,
             "tool_uses": info.tool_uses, "tokens": info.tokens, "usage": usage_of(sub),
             "duration_ms": round((time.monotonic() - run.started) * 1000)}
    if info.worktree:
        stats["worktree"] = {"path": info.worktree, "branch": sub.worktree.branch
                             if sub.worktree else None}
    tail = "\n\n" + json.dumps(stats)
    if info.status == "completed":
        return ToolResult((sub.final_text or "(the subagent ended without a report)") + tail)
    return ToolResult(f"subagent {info.agent_id} {info.status}: {ending(sub, run)}"
                      + tail, is_error=True)


def notification(sub: Subagent, run: Run, status: str, text: str) -> str:
    """The parent's `<subagent-notification>`: the end, its usage, its recent calls."""
    body = escape(text)
    if sub.info.worktree and sub.worktree is not None:
        body += escape(f"\n[its worktree is kept: {sub.info.worktree}, branch"
                       f" {sub.worktree.branch}]")
    usage = " ".join(f"{k}={v}" for k, v in usage_of(sub).items())
    recent = (f' recent="{escape(" | ".join(sub.info.recent), True)}"' if sub.info.recent
              else "")  # its last tool calls, oldest first
    return (f'<subagent-notification agent_id="{sub.agent_id}" agent_type='
            f'"{escape(sub.info.subagent_type, True)}" status="{status}" usage="{usage}"'
            f' duration_s="{round(time.monotonic() - run.started)}"{recent}>'
            f"{body}</subagent-notification>")


def ending(sub: Subagent, run: Run) -> str:
    """How a run ended, in words: its report, or why it has none."""
    outcome = run.outcome
    if run.error:
        return f"it crashed: {run.error}"
    if outcome is not None and outcome.failure:
        return outcome.failure
    text = sub.final_text or "(no report)"
    if run.stop.is_set():
        return f"{run.stop_reason}. Its last words: {text}"
    if outcome is not None and outcome.reason not in ("available", "interrupted"):
        return f"{text}\n(it ended early: {outcome.reason})"
    return text


def status_lines(sub: Subagent, detail: bool) -> list[str]:
    """`AgentStatus`: one line per subagent, then its recent calls (and, asked about one that
    ended, how it ended)."""
    i = sub.info
    elapsed = round(time.monotonic() - sub.run.started)  # this run's (a resume: anew)
    lines = [f"{i.agent_id} [{i.status}{', background' if i.background else ''}]"
             f" {i.subagent_type}: {i.description} ({i.tool_uses} tool uses,"
             f" {i.tokens} tokens{f', {elapsed}s' if i.status == 'running' else ''})"
             + (f" worktree {i.worktree}" if i.worktree else "")]
    lines += [f"  recent: {call}" for call in i.recent]
    if detail and sub.run.done.is_set():
        lines.append(ending(sub, sub.run))
    return lines
