"""How a teammate process ends: its last writes (each on its own), and the lead told of a death."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.model.names import LEAD_NAME
from swarm.core.model.protocol import Message, TeammateTerminated, dump_structured
from swarm.core.model.task import Task
from swarm.core.store import select as stores
from swarm.core.store.select import open_mailbox
from swarm.errors import describe_error

if TYPE_CHECKING:
    from swarm.runtime.agent import Agent

log = logging.getLogger(__name__)


def finish(agent: Agent, detail: str, died: bool) -> None:
    """Record how it ended. Each step on its own: after a crash (a full disk, a corrupt
    file) one failing write must not keep the others from happening."""
    agent.signals.ignore_stops()
    remote = stores.remote()
    # Exiting with the network store down: its last writes (state, released tasks) wait
    # out a short outage (SWARM_STORE_EXIT_GRACE), then it goes anyway (the heartbeat's
    # expiry tells the rest).
    if remote is not None:
        remote.give_up_after(settings.store_exit_grace())
    _attempt(agent, lambda: agent.extensions.session_end(detail))
    _attempt(agent, agent.extensions.close)  # no MCP server outlives us
    if agent.superseded:  # our tasks and state are someone else's now: touch neither
        _attempt(agent, lambda: agent.transcript.event("exited", detail=agent.superseded))
        return
    _attempt(agent, lambda: agent.subagents.stop_all(f"its parent {agent.name} exited: {detail}"))
    released: list[Task] = []
    _attempt(agent, lambda: released.extend(agent.team.tasks.release_owned_by(agent.name)))
    _attempt(agent, lambda: agent.transcript.event(
        "exited", detail=detail, released=[t.id for t in released]))
    agent.console.say(f"exited: {detail}")
    if not died:
        _attempt(agent, lambda: agent.set_state(state="exited", current_task=None, detail=detail))
        return
    # Nobody asked it to stop (a crash, or the user closed its pane): a death, told to the
    # lead once, as an observer would have recorded it.
    _attempt(agent, lambda: agent.set_state(state="dead", current_task=None, detail=detail,
                                         terminated_reported=True))
    _attempt(agent, lambda: tell_lead_of_death(agent.team.name, agent.name, detail))

def _attempt(agent: Agent, step: Callable[[], object]) -> None:
    try:
        step()
    except Exception as exc:
        log.warning("while exiting: %s", describe_error(exc))
        agent.console.say(f"while exiting: {describe_error(exc)}")


def tell_lead_of_death(team: str, name: str, reason: str) -> None:
    """Straight into the lead's mailbox: this must work even when the team file is what broke."""
    note = TeammateTerminated(agent_id=f"{name}@{team}", reason=reason)
    open_mailbox(team, LEAD_NAME).deliver([Message(sender=name, text=dump_structured(note))])
