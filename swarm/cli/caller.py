"""Who runs this `swarm` command: a teammate (found by process ancestry, as the sender of a
message is), the lead, or a person. Light on purpose: every teammate's start asks it
(cli.authority), before anything else is loaded."""

from __future__ import annotations

from swarm import settings
from swarm.core.records.names import LEAD_NAME
from swarm.core.store.liveness import agent_ancestor, lead_ancestor


def current_agent_name() -> str | None:
    """Who is speaking: the teammate whose `swarm agent` process is above this one, whatever
    the environment says (a teammate adopts its commands' orphans: runtime.process.subreaper, so a
    setsid or double fork stays below it); else `SWARM_AGENT_ID` (the lead's own commands and
    hooks carry it); else None: a person's shell, or the lead process's."""
    ancestor = agent_ancestor()
    if ancestor and not ancestor.startswith(f"{LEAD_NAME}@"):
        return ancestor.partition("@")[0]
    value = settings.agent_id()
    return value.partition("@")[0] if value else None


def acting_member() -> str | None:
    """The member whose shell this is (`current_agent_name`, else `team-lead` under a `swarm
    lead` process), or None for a person's shell: who the limits on members apply to (task
    ownership, the mode cap)."""
    name = current_agent_name()
    if name:
        return name
    return LEAD_NAME if lead_ancestor() else None
