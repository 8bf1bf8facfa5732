"""A teammate process's life: its inputs and turns until it is shut down, stopped or crashes; then
its last writes (each on its own), and the lead told of a death."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message, TeammateTerminated, dump_structured
from swarm.core.records.task import Task
from swarm.core.store import select as stores
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.core.trust.secrets import redact
from swarm.errors import AgentStopped, describe_error
from swarm.runtime.process.orphan import close_own_pane

if TYPE_CHECKING:
    from swarm.runtime.teammate.agent import Agent

log = logging.getLogger(__name__)


def live(agent: Agent) -> int:
    """Run until shut down, stopped or crashed; then its last writes. The exit code."""
    agent.signals.install()
    # Before any command runs: what its commands leave behind stays below this process,
    # so a `swarm` command there speaks as this teammate (cli.caller.current_agent_name).
    agent.reaper.start()
    write_state(agent.team.name, agent.name, agent.state)
    agent.team.update_member(agent.name, pid=os.getpid())
    agent.transcript.event("started", pid=os.getpid(), model=agent.model_name)
    agent.start_heartbeat()
    agent.console.say(f"{agent.name}@{agent.team.name} started (model {agent.model_name}, "
                     f"mode {agent.policy.mode}, pid {os.getpid()})")
    exit_code, detail, crashed = 0, "shut down", False
    try:
        mcp_tools = agent.extensions.start_mcp(agent.signals.interrupt)
        if mcp_tools:
            agent.modes.add_tools(mcp_tools)
        with agent.inputs.watcher() as watcher:
            agent.set_state(state="idle", idle_reason="available")
            agent.console.idle()
            while not agent.shutdown.approved:
                inbound, task = agent.inputs.next_input(watcher)
                agent.extensions.new_input()
                outcome = agent.take_turn(inbound, task)
                while not agent.shutdown.approved and (more := agent.follow_up(outcome)):
                    outcome = agent.continue_turn(more)
                if agent.shutdown.approved:
                    break
                agent.after_turn(outcome)
    except AgentStopped:
        if agent.orphan.orphaned:
            exit_code, detail = 0, agent.orphan.orphaned
        else:
            exit_code, detail = ((129, "its pane was closed (SIGHUP)") if agent.signals.hangup
                                 else (143, "killed (SIGTERM)"))
    except Exception as exc:  # a crash: recorded as a death, never as a clean exit
        exit_code, detail, crashed = 1, f"crashed: {redact(describe_error(exc))}", True
        log.exception("crashed")
        agent.console.say(detail)
    finally:
        agent.stop_heartbeat()
        finish(agent, detail, died=crashed or agent.signals.hangup)
        if agent.orphan.orphaned:
            close_own_pane()
    return exit_code


def finish(agent: Agent, detail: str, died: bool) -> None:
    """Record how it ended. Each step on its own: after a crash (a full disk, a corrupt
    file) one failing write must not keep the others from happening."""
    agent.signals.ignore_stops()
    # Exiting with the store down: its last writes (state, released tasks) wait out a short
    # outage (SWARM_STORE_EXIT_GRACE), then it goes anyway (the heartbeat's expiry tells the
    # rest).
    stores.team_store().give_up_after(settings.store_exit_grace())
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
    Team(team).inbox(LEAD_NAME, checked=False).deliver([Message(sender=name, text=dump_structured(note))])
