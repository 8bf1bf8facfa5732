"""A running background subagent's short summary of its progress, for `swarm status` (Claude
Code's agent summary), refreshed as it works: after a tool call, once at least
SWARM_SUBAGENT_SUMMARY_EVERY seconds have passed since the last one began, one at a time.

It is a short call on a small model in a thread of its own (the subagent does not wait): the
model is SWARM_SUMMARY_MODEL, else haiku for a subagent on Anthropic's API; it is shown the
subagent's job, its last tool calls and its last words (not its conversation), and its usage is
the subagent's (its tokens, its parent's usage and budget). With no model for it (an offline or
another provider's subagent, SWARM_SUMMARY_MODEL=none, a spent budget, a failed call) the
summary is made from its tool calls: how many, of which tools, and the last.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.records.state import Usage
from swarm.core.text.readable import clip, flat
from swarm.errors import SwarmError, describe_error
from swarm.runtime.models import load_model, provider_of
from swarm.runtime.models.base import ModelRequest

if TYPE_CHECKING:
    from swarm.runtime.subagents.subagent import Subagent

log = logging.getLogger(__name__)
MARKER = "[swarm:subagent-summary]"  # starts the request's system prompt (offline models, tests)
SYSTEM = (f"{MARKER} You watch a coding agent at work. Say what it is doing now in at most eight"
          " words, present tense, e.g. `Reading the config loader`. Reply with those words only.")
MAX_TOKENS = 40
WIDTH = 100  # characters of a summary
SMALL_MODEL = "haiku"  # an Anthropic subagent's summaries


class Summaries:
    """One subagent's summaries: `tool_done` after each of its tool calls."""

    def __init__(self, sub: Subagent) -> None:
        self.sub = sub
        self.counts: Counter[str] = Counter()
        self._began = time.monotonic()  # the first one after an interval too
        self._busy = False

    def tool_done(self, tool_name: str) -> None:
        self.counts[tool_name] += 1
        info = self.sub.info
        if not info.background or info.status != "running" or self._busy:
            return
        if time.monotonic() - self._began < settings.subagent_summary_every():
            return
        self._busy, self._began = True, time.monotonic()
        spec = self.model_spec()
        if spec is None:
            self._set(self.from_tools())
            return
        threading.Thread(target=self._ask, args=(spec,), name=f"{info.agent_id}-summary",
                         daemon=True).start()

    def model_spec(self) -> str | None:
        wanted = settings.summary_model()
        if wanted:
            return None if wanted == "none" else wanted
        return SMALL_MODEL if provider_of(self.sub.loop.model) == "anthropic" else None

    def from_tools(self) -> str:
        total = sum(self.counts.values())
        kinds = ", ".join(f"{name} {n}" for name, n in self.counts.most_common())
        last = f"; last: {self.sub.info.recent[-1]}" if self.sub.info.recent else ""
        return clip(f"{total} tool call{'s' * (total != 1)}: {kinds}{last}", WIDTH)

    def _ask(self, spec: str) -> None:
        sub = self.sub
        summary = ""
        try:
            if sub.runner.host.spend_limit(Usage()) is None:  # a spent budget pays for no more
                model = load_model(spec, cwd=str(sub.loop.ctx.cwd), like=sub.loop.model)
                reply = model.complete(ModelRequest(SYSTEM, [{"role": "user", "content": [
                    {"type": "text", "text": self._what()}]}], [], max_tokens=MAX_TOKENS))
                sub.count(reply.usage)  # the subagent's cost: its parent's usage and budget
                summary = clip(flat(reply.text()), WIDTH)
        except (SwarmError, OSError, ValueError) as exc:
            sub.trace(f"summary not made: {describe_error(exc)}")
        except Exception:  # a provider SDK's own error: the summary is only a nicety
            log.exception("summary of %s failed", sub.agent_id)
        self._set(summary or self.from_tools())

    def _what(self) -> str:
        info = self.sub.info
        lines = [f"Its job: {info.description}", "Its last tool calls, oldest first:",
                 *(f"- {call}" for call in info.recent)]
        if self.sub.final_text:
            lines.append(f"Its last words: {clip(flat(self.sub.final_text), 300)}")
        return "\n".join(lines)

    def _set(self, summary: str) -> None:
        runner = self.sub.runner
        with runner.lock:
            self._busy = False
            if self.sub.info.status != "running":
                return  # it ended meanwhile: its record is final
            self.sub.info.summary = summary
        runner.changed(sync=False)
