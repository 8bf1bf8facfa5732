"""Every path swarm uses, derived from $SWARM_HOME (default ~/.swarm). Nothing else builds paths."""

from __future__ import annotations

from pathlib import Path

from swarm import settings


def home() -> Path:
    return settings.home()


def teams_dir() -> Path:
    return home() / "teams"


def team_dir(team: str) -> Path:
    return teams_dir() / team


def local_team_dir(team: str) -> Path:
    """What stays on this host of a team: agents' transcripts and logs, worktrees. The team
    directory itself on the file store; `hosts-local/<team>` when the team lives on a network
    store (SWARM_STORE=redis://...), so nothing of it is under `teams/`."""
    if settings.store() == "file":
        return team_dir(team)
    return home() / "hosts-local" / team


def team_config(team: str) -> Path:
    return team_dir(team) / "config.json"


def inboxes_dir(team: str) -> Path:
    return team_dir(team) / "inboxes"


def inbox(team: str, name: str) -> Path:
    return inboxes_dir(team) / f"{name}.jsonl"


def inbox_archive(team: str, name: str) -> Path:
    return inboxes_dir(team) / f"{name}.archive.jsonl"


def tasks_dir(team: str) -> Path:
    return team_dir(team) / "tasks"


def task_file(team: str, task_id: str) -> Path:
    return tasks_dir(team) / f"{task_id}.json"


def tasks_lock(team: str) -> Path:
    return tasks_dir(team) / ".lock"


def tasks_highwater(team: str) -> Path:
    return tasks_dir(team) / ".highwatermark"


def agent_dir(team: str, name: str) -> Path:
    return local_team_dir(team) / "agents" / name


def agent_state(team: str, name: str) -> Path:
    return agent_dir(team, name) / "state.json"


def agent_transcript(team: str, name: str) -> Path:
    return agent_dir(team, name) / "transcript.jsonl"


def agent_log(team: str, name: str) -> Path:
    return agent_dir(team, name) / "agent.log"


def agent_asking(team: str, name: str) -> Path:
    """What an agent CLI teammate's MCP server asks the lead now (it shows in the state)."""
    return agent_dir(team, name) / "asking.json"


def mcp_hub_dir(team: str) -> Path:
    """The team's MCP server on this host (`swarm mcp hub`): its run file, its lock and the
    hash of each member driver's token (on this host: the hub serves this host's members)."""
    return local_team_dir(team) / "mcp-hub"


def mcp_hub_run(team: str) -> Path:
    """The running hub: pid, process start time, port; lock: hub.json.lock."""
    return mcp_hub_dir(team) / "hub.json"


def mcp_hub_members(team: str) -> Path:
    return mcp_hub_dir(team) / "members"


def mcp_hub_member(team: str, name: str) -> Path:
    """Member NAME's driver: its pid, start time and the SHA-256 of its token."""
    return mcp_hub_members(team) / f"{name}.json"


def worktrees_dir(team: str) -> Path:
    return local_team_dir(team) / "worktrees"


def kept_worktrees_dir() -> Path:
    """Where `team delete` moves worktrees with work in them: outside every team directory."""
    return home() / "kept-worktrees"


def team_writes(team: str) -> Path:
    """Which member wrote which file (overlap detection); lock: writes.json.lock."""
    return local_team_dir(team) / "writes.json"


def subagents_dir(team: str, name: str) -> Path:
    return agent_dir(team, name) / "subagents"


def subagent_transcript(team: str, name: str, agent_id: str) -> Path:
    """`agents/<name>/subagents/<id>.jsonl`; `agent_id` is `<name>.sub-<n>`."""
    return subagents_dir(team, name) / f"{agent_id}.jsonl"


def user_agents_dir() -> Path:
    return home() / "agents"


def plugins_dir() -> Path:
    """Plugins in Claude Code's layout: `<plugin>/.claude-plugin/plugin.json`, `<plugin>/agents/`."""
    return home() / "plugins"


def claude_user_agents_dir() -> Path:
    """Claude Code's user agent definitions (read beside swarm's own, below them)."""
    return Path.home() / ".claude" / "agents"


def pane_lock() -> Path:
    """Serializes pane creation across every swarm process on this machine."""
    return home() / "locks" / "panes.lock"


def user_skills_dir() -> Path:
    """The user's skills: `NAME/SKILL.md` (core.agents.skills)."""
    return home() / "skills"


def claude_user_skills_dir() -> Path:
    """Claude Code's user skills (read below swarm's own)."""
    return Path.home() / ".claude" / "skills"


def user_memory() -> Path:
    """The user's memory file, in every agent's prompt (after the definition body)."""
    return home() / "SWARM.md"


def user_settings() -> Path:
    """User settings (hooks); the project's are `<project>/.swarm/settings.json`."""
    return home() / "settings.json"


def user_mcp_config() -> Path:
    """User MCP servers; the project's are `<project>/.mcp.json`."""
    return home() / "mcp.json"


def trust_file() -> Path:
    """Projects whose configuration the user trusted, each with the digest it trusted."""
    return home() / "trust.json"
