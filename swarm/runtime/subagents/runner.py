"""The subagent runner: what the `Agent`, `AgentStatus` and `AgentStop` tools (and SendMessage to
a subagent's id) do, for any agent that implements `SubagentHost` (a teammate, the lead).

A subagent is a thread in its parent's process (`subagent.py`), never a process: ids
`<parent>.sub-<n>`, a transcript at `agents/<parent>/subagents/<id>.jsonl`, its usage counted
toward the parent's, a short record in the parent's state.json for `swarm status`.

- Foreground: the tool call waits for the final report (an interrupt of the parent's turn stops
  the subagent); after `SWARM_AUTO_BACKGROUND_S`, or at once when a person asks
  (`swarm interrupt NAME --background`: `to_background`), it moves to the background and the
  call returns.
- Background: the call returns at once; the end arrives as a `<subagent-notification>` input,
  handed to the parent at its next model call, or waking it (the `waker`) when it is idle.
- Fork (no `subagent_type`): the parent's last request (system, tools, messages) byte for byte,
  then the parent's reply, a placeholder result for each of its tool calls, and the directive.
  A fork always runs in the background (`run_in_background` is ignored): it is the parent's own
  side job, and the parent, which already holds the same context, goes on meanwhile.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.records import base as records
from swarm.core.records.protocol import escape
from swarm.core.records.state import SubagentInfo
from swarm.core.store import paths
from swarm.core.store.disk import utcnow_iso
from swarm.core.store.waker import Waker
from swarm.core.team.transcript import Transcript
from swarm.errors import SwarmError, ToolError, describe_error
from swarm.runtime.subagents.reports import ending, notification, result, status_lines
from swarm.runtime.subagents.tools import (
    ParentMessage,
    SubagentRequest,
)
from swarm.runtime.tools.base import ToolResult
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.turn.budget import depth_refusal
from swarm.settings import (
    auto_background_s,
    max_subagents,
    max_subagents_total,
)

if TYPE_CHECKING:  # the thread machinery and git helpers load with the first subagent
    from swarm.core.team.worktrees import WorktreeRecord
    from swarm.runtime.extensions.mcp_client import McpManager
    from swarm.runtime.subagents.host import SubagentHost
    from swarm.runtime.subagents.subagent import Run, Subagent, SubagentParts

FORK_TYPE = "fork"
KEEP_ENDED = 10  # ended subagents kept in state.json after the running ones
WAIT_SLICE = 0.2  # a foreground wait re-checks for an interrupt or a person's "background"


class Subagents:
    def __init__(self, host: SubagentHost) -> None:
        self.host = host
        self.lock = threading.RLock()
        self.waker = Waker()
        self._all: dict[str, Subagent] = {}
        self._arrivals: list[dict[str, Any]] = []
        self.tools = all_tools()  # stateless: one set serves every subagent
        self._writing = threading.Lock()
        self._backgrounds = 0  # a person's requests so far (from a signal handler: no lock)
        self._write_pending = False
        self._id_re = re.compile(rf"^{re.escape(host.name)}\.sub-([1-9][0-9]*)$")
        self._next = 1 + max((int(m.group(1)) for p in self._dir().glob("*.jsonl")
                              if (m := self._id_re.match(p.stem))), default=0)

    def _dir(self) -> Path:
        return paths.subagents_dir(self.host.team.name, self.host.name)

    # -- starting ------------------------------------------------------------------------------
    def start(self, request: SubagentRequest) -> ToolResult:
        """The `Agent` tool: start one, then wait for it (foreground) or return (background)."""
        self._room()
        self._allowed()
        sub, content = self._build(request)
        run = sub.start(content)
        self.host.trace(f"started {sub.agent_id} ({sub.info.subagent_type}"
                        f"{', background' if sub.info.background else ''}): {request.description}")
        self.changed(sync=False)  # off the new thread's way to its first request
        if sub.info.background:
            return ToolResult(json.dumps({"agent_id": sub.agent_id, "status": "running"})
                              + "\nIt works in the background: a <subagent-notification> tells"
                              " you when it ends (AgentStatus to look, AgentStop to stop it).")
        return self._wait(sub, run)

    def _room(self) -> None:
        """At most SWARM_MAX_SUBAGENTS run at once (a model starting 40 would run 40 threads,
        each with its own model calls): past it, the Agent tool says so and starts nothing."""
        cap = max_subagents()
        with self.lock:
            running = [s.agent_id for s in self._all.values() if s.info.status == "running"]
        if len(running) >= cap:
            raise ToolError(f"{len(running)} subagents are running ({', '.join(running)}): the"
                            f" limit is {cap} at once (SWARM_MAX_SUBAGENTS). Wait for one to end"
                            " (AgentStatus) or stop one (AgentStop), then start this one.")

    def _allowed(self) -> None:
        """A new one is refused past the delegation depth cap, and past SWARM_MAX_SUBAGENTS_TOTAL
        started by this agent over its life (its earlier processes' included: their
        transcripts are numbered), each in one line the model reads and the pane shows."""
        refused = depth_refusal(self.host.depth + 1, "Agent")
        started = self._next - 1
        if not refused and started >= max_subagents_total():
            refused = (f"Agent refused: {self.host.name} has started {started} subagents, the"
                       f" most one agent may (SWARM_MAX_SUBAGENTS_TOTAL={max_subagents_total()});"
                       " do the rest yourself")
        if refused:
            self.host.trace(refused)
            raise ToolError(refused)

    def _build(self, request: SubagentRequest) -> tuple[Subagent, list[dict[str, Any]]]:
        """A new subagent and its first input: a fork of the host, or one of a type."""
        from swarm.runtime.subagents.making import fork, typed

        return fork(self, request) if request.subagent_type is None else typed(self, request)

    def place(self, request: SubagentRequest, definition: AgentDefinition | None
               ) -> tuple[str, WorktreeRecord | None, Path, str]:
        """Its id, its worktree (if isolated), where it works, and its directive."""
        with self.lock:
            agent_id = f"{self.host.name}.sub-{self._next}"
            self._next += 1
        isolation = request.isolation or (definition.isolation if definition else None)
        worktree = self._worktree(agent_id) if isolation else None
        directive = request.prompt
        if worktree is not None:
            from swarm.runtime.subagents.worktree import worktree_notice

            directive += "\n\n" + worktree_notice(worktree, self.host.cwd, definition is None)
        return agent_id, worktree, worktree.cwd if worktree else self.host.cwd, directive

    def _worktree(self, agent_id: str) -> WorktreeRecord:
        from swarm.runtime.subagents.worktree import start_worktree

        return start_worktree(self.host.team.name, agent_id, self.host.cwd, self.host.project,
                              self.host.trace)

    def info_for(self, request: SubagentRequest, definition: AgentDefinition | None, agent_id: str,
              worktree: WorktreeRecord | None) -> SubagentInfo:
        # A fork is always background (subagents.md); a type: as asked, else as its definition says.
        background = definition is None or (request.background if request.background is not None
                                            else definition.background)
        return SubagentInfo(agent_id=agent_id, subagent_type=definition.name if definition
                            else FORK_TYPE, description=request.description,
                            background=background, depth=self.host.depth + 1,
                            worktree=str(worktree.path) if worktree else None)

    def message_tool(self, agent_id: str) -> ParentMessage:
        """A subagent's SendMessage: to its parent only."""
        return ParentMessage(self.host.name, self.host.team.name,
                             lambda text, summary: self._from_subagent(agent_id, text, summary))

    def new(self, request: SubagentRequest, agent_id: str, spec: str,
             parts: SubagentParts) -> Subagent:
        """Made (with its loop), recorded as started, and counted among the running."""
        from swarm.runtime.subagents.subagent import Subagent

        transcript = Transcript(paths.subagent_transcript(self.host.team.name, self.host.name,
                                                          agent_id))
        sub = Subagent(self, transcript, parts)
        sub.transcript.event("started", subagent_type=parts.info.subagent_type, model=spec,
                             description=request.description, background=parts.info.background,
                             cwd=str(parts.cwd), inherited_messages=len(sub.loop.messages),
                             **({"withheld_tools": parts.withheld} if parts.withheld else {}))
        with self.lock:
            self._all[agent_id] = sub
        return sub

    def release(self, agent_id: str, mcp: McpManager | None,
                 worktree: WorktreeRecord | None) -> bool:
        """Its own servers stopped, its worktree removed if unchanged; True if it is kept."""
        if mcp is not None:
            mcp.close()
        if worktree is None:
            return False
        try:
            from swarm.runtime.subagents.worktree import finish_worktree

            return finish_worktree(worktree)
        except (SwarmError, OSError) as exc:
            self.host.trace(f"{agent_id}: worktree left as it is: {describe_error(exc)}")
            return True  # unsure what is in it: never delete it

    def to_background(self) -> None:
        """A person asked (SIGUSR1): every foreground wait in progress ends at its next slice.
        Only an int is touched: this runs in a signal handler, maybe inside `self.lock`."""
        self._backgrounds += 1

    def _wait(self, sub: Subagent, run: Run) -> ToolResult:
        deadline = time.monotonic() + auto_background_s()
        asked = self._backgrounds
        try:
            while (left := deadline - time.monotonic()) > 0 and self._backgrounds == asked:
                if self.host.interruptible(lambda: run.done.wait(min(left, WAIT_SLICE))):
                    return result(sub, run)
        except BaseException:  # the parent's turn was interrupted (or it is stopping): stop it
            self.stop(sub.agent_id, "the parent's turn was interrupted")
            raise
        with self.lock:  # decided together with `ended`: a result, or a notification later
            ending = sub.info.status != "running"
            sub.info.background = not ending
        if ending:
            run.done.wait()
            return result(sub, run)
        self.changed()
        why = ("a person sent it to the background" if self._backgrounds != asked
               else f"still working after {auto_background_s():g}s")
        self.host.trace(f"{sub.agent_id} moved to the background ({why})")
        return ToolResult(json.dumps({"agent_id": sub.agent_id, "status": "running"})
                          + f"\n{why[0].upper()}{why[1:]}: it moved to the background; a"
                          " <subagent-notification> tells you when it ends.")

    # -- ending --------------------------------------------------------------------------------
    def ended(self, sub: Subagent, run: Run) -> None:
        """Called by the subagent's thread when its run is over (and by `stop`, first)."""
        with self.lock:
            if run.finishing:
                return  # already recorded (it was stopped: this is the abandoned thread)
            run.finishing = True
            outcome = run.outcome
            if run.stop.is_set() or (outcome is not None and outcome.reason == "interrupted"):
                status = "stopped"
            elif run.error is not None or outcome is None or outcome.reason == "failed":
                status = "failed"
            else:
                status = "completed" if outcome.reason == "available" else "stopped"
        kept = self.release(sub.agent_id, sub.mcp, sub.worktree)
        text = ending(sub, run)
        with self.lock:  # ended and its notification at once: a reader never sees one alone
            sub.info.status = status  # type: ignore[assignment]
            sub.info.ended_at = utcnow_iso()
            if sub.worktree is not None:
                sub.info.worktree = str(sub.worktree.path) if kept else None
            notify = sub.info.background
            if notify:
                self._arrivals.append({"type": "text",
                                       "text": notification(sub, run, status, text)})
        sub.transcript.event("ended", status=status, detail=text, tool_uses=sub.info.tool_uses,
                             tokens=sub.info.tokens,
                             duration_ms=round((time.monotonic() - run.started) * 1000))
        self.host.trace(f"{sub.agent_id} {status}")
        if notify:
            self.waker.set()
        self.changed()
        try:
            self.host.subagent_stopped(records.replace(sub.info), text)
        finally:
            run.done.set()  # last: a foreground caller returns with everything recorded

    def stop(self, agent_id: str, why: str) -> ToolResult:
        """`AgentStop`: recorded as stopped at once; its thread is abandoned (see subagent.py)."""
        sub = self._find(agent_id)
        with self.lock:
            run = sub.run
            if run.finishing:
                raise ToolError(f"{agent_id} is not running (it {sub.info.status})")
            run.stop_reason = why
            sub.stop()
        self.ended(sub, run)
        return ToolResult(f"stopped {agent_id}")

    def stop_all(self, why: str) -> None:
        """The parent is exiting: stop every running subagent, recording each."""
        for sub in list(self._all.values()):
            if not sub.run.finishing:
                try:
                    self.stop(sub.agent_id, why)
                except (ToolError, SwarmError, OSError) as exc:
                    self.host.trace(f"while stopping {sub.agent_id}: {describe_error(exc)}")

    # -- status, messages, resume --------------------------------------------------------------
    def owns(self, agent_id: str) -> bool:
        return bool(self._id_re.match(agent_id))

    def _find(self, agent_id: str) -> Subagent:
        sub = self._all.get(agent_id)
        if sub is not None:
            return sub
        known = ", ".join(self._all) or "none yet"
        if self.owns(agent_id) and paths.subagent_transcript(
                self.host.team.name, self.host.name, agent_id).exists():
            raise ToolError(f"{agent_id} ran in an earlier process of {self.host.name} and ended"
                            f" with it (your subagents now: {known}); start a new one")
        raise ToolError(f"no subagent {agent_id!r} (yours: {known})")

    def status(self, agent_id: str | None) -> ToolResult:
        subs = [self._find(agent_id)] if agent_id else list(self._all.values())
        if not subs:
            return ToolResult("(no subagents)")
        lines = [line for sub in subs for line in status_lines(sub, bool(agent_id))]
        return ToolResult("\n".join(lines))

    def message(self, agent_id: str, text: str, summary: str | None) -> ToolResult:
        """SendMessage from the parent: a running subagent reads it at its next model call; a
        finished one resumes its conversation with it, in the background."""
        sub = self._find(agent_id)
        if sub.run.finishing and sub.one_shot:
            raise _one_shot(sub)
        if sub.run.finishing:
            self._room()  # resuming an ended one starts it again
        block = {"type": "text", "text": f'<teammate-message from="{escape(self.host.name, True)}"'
                 f' summary="{escape(summary or "", True)}">{escape(text)}</teammate-message>'}
        if sub.run.finishing:  # ending right now: let it end, then resume it
            sub.run.done.wait(5)
        with self.lock:
            if not sub.run.finishing:
                sub.deliver(block)
                return ToolResult(f"sent to {agent_id} (running: it reads it at its next step)")
            if sub.one_shot:  # it ended while the message was on its way
                raise _one_shot(sub)
            sub.info.status, sub.info.background, sub.info.ended_at = "running", True, None
        assert sub.loop is not None
        sub.loop.close_dangling("stopped before this call finished")
        content = [block]
        if sub.worktree is not None and sub.info.worktree is None:  # removed: it was unchanged
            sub.worktree = self._worktree(agent_id)
            sub.move_to(sub.worktree.cwd)
            sub.info.worktree = str(sub.worktree.path)
            content.append({"type": "text", "text": (
                f"(Your earlier worktree was removed as you left it unchanged; you now work in a"
                f" new one: {sub.worktree.path}, branch {sub.worktree.branch}.)")})
        sub.transcript.event("resumed")
        sub.start(content)
        self.changed(sync=False)
        return ToolResult(f"resumed {agent_id} in the background with its earlier conversation;"
                          " a <subagent-notification> tells you when it ends")

    # -- the parent's inputs and records ---------------------------------------------------------
    def _from_subagent(self, agent_id: str, text: str, summary: str | None) -> None:
        attrs = f'agent_id="{agent_id}"' + (f' summary="{escape(summary, True)}"'
                                                  if summary else "")
        self._arrive(f"<subagent-message {attrs}>{escape(text)}</subagent-message>")

    def _arrive(self, text: str) -> None:
        with self.lock:
            self._arrivals.append({"type": "text", "text": text})
        self.waker.set()

    def has_arrivals(self) -> bool:
        with self.lock:
            return bool(self._arrivals)

    def take_arrivals(self) -> list[dict[str, Any]]:
        """Notifications and messages from subagents, for the parent's next model call."""
        with self.lock:
            taken, self._arrivals = self._arrivals, []
        return taken

    def records(self) -> list[SubagentInfo]:
        with self.lock:
            subs = [records.replace(s.info) for s in self._all.values()]
        running = [s for s in subs if s.status == "running"]
        ended = [s for s in subs if s.status != "running"][-KEEP_ENDED:]
        return running + ended

    def changed(self, sync: bool = True) -> None:
        """Tell `swarm status` (the parent's state.json): now, or soon from another thread
        (changes meanwhile are one write)."""
        if sync:
            self._write()
            return
        with self.lock:
            if self._write_pending:
                return
            self._write_pending = True
        threading.Thread(target=self._write, name="subagent-status", daemon=True).start()

    def _write(self) -> None:
        with self._writing:  # records read and written together: a later write is never older
            with self.lock:
                self._write_pending = False
            try:
                self.host.set_state(subagents=self.records())
            except OSError as exc:
                self.host.trace(f"subagent status not written: {describe_error(exc)}")


def _one_shot(sub: Subagent) -> ToolError:
    return ToolError(f"{sub.agent_id} ({sub.info.subagent_type}) is one-shot: it ran once and"
                     " reported, and is not resumed; start a new one with what it should do")
