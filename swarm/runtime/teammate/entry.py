"""`swarm agent --agent-id NAME@TEAM`: the teammate process's entry point (swarm's own loop, or
another agent CLI driven headless); a start that fails is a death with its reason. The process
makes itself non-dumpable and zeroes the secrets of the environment it was started with first:
its commands run as the same user."""

from __future__ import annotations

import contextlib
import logging
import os

from swarm.core.records.names import parse_agent_id
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.store import select as stores
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import update_state
from swarm.core.team.team import Team
from swarm.core.text.terminal import visible
from swarm.core.trust.process_memory import make_non_dumpable, scrub_starting_environ
from swarm.core.trust.secrets import is_secret, redact
from swarm.errors import describe_error
from swarm.log import configure as configure_logging
from swarm.runtime.teammate.agent import Agent
from swarm.runtime.teammate.life import tell_lead_of_death

log = logging.getLogger(__name__)


def run_agent(agent_id: str) -> int:
    name, team = parse_agent_id(agent_id)
    configure_logging(paths.agent_log(team, name))
    # It holds the model credential: closed to the commands it runs (the same user), which
    # could read its memory and the environment it was started with (core.trust.process_memory).
    make_non_dumpable()
    scrub_starting_environ(is_secret)
    # Wait out the store's outages (a network store's; the pane says so).
    stores.team_store().be_patient(lambda text: print(visible(f"swarm: {name}: {text}"),
                                                      flush=True))
    try:
        member = Team.open(team).config().member(name)
        if member is not None and member.agent:  # another agent CLI, driven headless
            from swarm.runtime.teammate.cli_teammate import CliTeammate

            agent: Agent | CliTeammate = CliTeammate(team, name)
        else:
            agent = Agent(team, name)
        os.chdir(agent.cwd)
    except Exception as exc:  # it could not even start: a death with its reason, told once
        detail = f"crashed at start: {redact(describe_error(exc))}"  # state, lead, pane
        log.exception("could not start")
        print(visible(f"swarm: error: {name}: {detail}"), flush=True)  # the pane shows it

        def mark(state: AgentState) -> None:
            state.state, state.detail, state.terminated_reported = "dead", detail, True
            state.pid, state.started_at = os.getpid(), process_start_time(os.getpid())

        update_state(team, name, mark)
        with contextlib.suppress(Exception):
            Team(team).tasks.release_owned_by(name)
        tell_lead_of_death(team, name, detail)
        return 1
    return agent.run()
