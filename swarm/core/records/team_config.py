"""The team document (`config.json`, or `swarm:<team>:config` on Redis): the team and its members."""

from __future__ import annotations

import uuid
from typing import Literal

from swarm.core.records.base import Record, field
from swarm.core.records.names import LEAD_NAME, agent_id
from swarm.core.store.disk import utcnow_iso

CONFIG_VERSION = 1
BackendName = Literal["tmux", "iterm2", "hidden", "ssh"]  # names.BACKENDS, as a type
PALETTE = ("blue", "green", "yellow", "magenta", "cyan", "red", "bright_blue", "bright_green")


def _new_session_id() -> str:
    return str(uuid.uuid4())


class Member(Record, kw_only=True):
    agent_id: str
    name: str
    agent_type: str = "general-purpose"
    model: str | None = None
    effort: str | None = None  # how hard it thinks (runtime.models.effort), None: the default
    prompt: str = ""
    color: str | None = None
    plan_mode_required: bool = False
    permission_mode: str = "default"
    joined_at: str = field(default_factory=utcnow_iso)
    backend: BackendName | None = None
    pane_id: str | None = None
    tmux_socket: str | None = None
    # `--backend ssh:[USER@]HOST[:PORT]`: the host its process runs on. Its pid is that host's:
    # signals go through ssh and its liveness is its heartbeat, never a local pid check.
    host: str | None = None
    cwd: str | None = None
    # Set by `spawn --worktree` (swarm.core.team.worktrees): the checkout, its branch, the commit it
    # started from, and the checkout it came from (where `swarm merge` lands its work).
    worktree_path: str | None = None
    worktree_branch: str | None = None
    worktree_base: str | None = None
    worktree_repo: str | None = None
    pid: int | None = None
    allow_rules: list[str] = []
    deny_rules: list[str] = []
    # `--ask RULE`: calls a person decides, in every mode (an auto lead's are inherited).
    ask_rules: list[str] = []
    # auto's reviewer: `command:PROG`, `model:NAME`, `lead` or `none` (None: `none`); from the
    # command line or the user's settings only (runtime.permissions.reviewer).
    reviewer: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    max_tokens: int | None = None  # its tokens, its subagents' included
    # The length of the delegation chain from the person: 1 for the lead or a teammate a
    # person spawned, 2 for one the lead spawned (swarm.runtime.turn.budget.depth_refusal).
    depth: int = 1
    mcp_servers: list[str] = []  # `spawn --mcp NAME`
    # `spawn --agent claude-code`: the teammate is that CLI, driven by `swarm agent`
    # (swarm.runtime.clis); None: swarm's own loop.
    agent: str | None = None
    agent_command: list[str] | None = None  # `--agent acp -- CMD ARGS`: the agent's command
    # The digest of the project configuration its spawner trusted for this run only
    # (--trust-project, SWARM_TRUST_PROJECT=1): the process trusts that digest, nothing else.
    trusted_config: str | None = None


class TeamConfig(Record, kw_only=True):
    version: int = CONFIG_VERSION
    name: str
    description: str = ""
    created_at: str = field(default_factory=utcnow_iso)
    lead_agent_id: str
    lead_session_id: str = field(default_factory=_new_session_id)
    # Set while a `swarm lead` process leads the team (its pid and process start time): its
    # teammates leave on their own once it is gone (orphans). None for a team led from a shell.
    lead_pid: int | None = None
    lead_started_at: float | None = None
    members: list[Member] = []
    allowed_rules: list[str] = []
    # An organisation's managed agent definitions (`<dir>/agents/*.md`, above all others),
    # read from the person's environment when the team was created: its members never read
    # their own (core.agents.definitions).
    policy_dir: str | None = None

    def member(self, name: str) -> Member | None:
        return next((m for m in self.members if m.name == name), None)


def new_config(name: str, description: str = "") -> TeamConfig:
    """A new team's document: the lead as its only member."""
    lead = agent_id(LEAD_NAME, name)
    return TeamConfig(name=name, description=description, lead_agent_id=lead,
                      members=[Member(agent_id=lead, name=LEAD_NAME, agent_type="team-lead",
                                      color="white")])
