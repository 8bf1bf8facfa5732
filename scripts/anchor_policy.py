"""The anchor wake policy, re-created for `scripts/bench_lead.py` only: every inbound message,
idle notifications included, is its own lead turn, in arrival order; messages that arrive during
a turn wait for it to end; no status block, no quiet-team wake. `LeadOptions(watch_type=AnchorWatch)`
selects it (not a CLI flag; not part of the product)."""

from __future__ import annotations

from swarm.core.records.protocol import IdleNotification, render_for_model
from swarm.lead.wake_policy import Wake, Watch, text_block
from swarm.runtime.teammate.console import brief


class AnchorWatch(Watch):
    """Every unread message, one turn each (see the module docstring)."""

    def collect(self) -> None:
        return None

    def next_wake(self) -> Wake | None:
        unread = self.box.unread()
        if not unread:
            return None
        message = unread[0]
        kind = message.structured()
        if isinstance(kind, IdleNotification):
            self.latest[message.sender] = kind
        else:
            self.reporter.message(message.sender, message.color,
                                  message.summary or brief(message.text, 80))
        reason = "idle" if isinstance(kind, IdleNotification) else "message"

        def done() -> None:
            self.box.mark_read([message.id])

        return Wake([reason], [text_block(render_for_model(message))], done)

    def input_for(self, text: str) -> Wake:
        return Wake(["person"], [text_block(text)])

    def arrivals(self) -> Wake | None:
        return None

    def finished(self) -> bool:
        return not self.box.unread() and self.view().quiet
