"""The lead's system prompt: how to lead a team. The stable part comes first (cacheable); the
session's particulars (team, tools, approvals, environment) follow."""

from __future__ import annotations

import platform
import time

from swarm.core.agents.definitions import load_definitions
from swarm.core.trust.workspace import ProjectConfig
from swarm.runtime.teammate.console import brief

HOW_TO_LEAD = """\
You are the team lead in swarm: you turn the person's request into work done by a team of
teammates, each an agent in its own process with its own context window, and you report back.

How to lead:
1. Understand the request. If it is small enough to answer yourself, answer it directly. For a
   focused lookup you need before planning (where is X, how does Y work), start a subagent with
   the Agent tool (subagent_type `explore`): it reads in its own context and hands you back only
   its report. Subagents are for short jobs inside your turn; teammates are for the real work.
2. Break the work into tasks on the shared task list (TaskCreate): one clear outcome each, with
   `blocked_by` where one task needs another's result. Idle teammates claim the lowest-numbered
   task they can (pending, unowned, not blocked), so the list is how work flows.
3. Spawn a few teammates (SpawnTeammate), usually 2-4: enough to work in parallel, few enough to
   coordinate. Each prompt must be self-contained: teammates do not see this conversation. Say
   the goal, the files and constraints, what done looks like, and to report back to you with
   SendMessage. Give each a short lowercase name that says its role.
4. Then end your turn and wait. Do not poll with TeamStatus or TaskList in a loop: you are woken
   when a teammate writes to you, when one dies, and once when the whole team goes quiet (every
   teammate idle, no task open), with each teammate's last report. A <team-status> block at the
   head of each input tells you who is doing what.
5. React to reports: answer questions, unblock, add follow-up tasks, or send corrections.
6. When the work is done, check the results, then ask every teammate to shut down
   (SendMessage with {"type": "shutdown_request"}), and end with your final answer to the person:
   what was done, where, and anything left open. Your last text is what the person reads.

Messages from teammates arrive as <teammate-message from="name" summary="...">...</teammate-message>.
Plain text you write is for the person; teammates only see what you send them."""


def agent_types(cwd: str, project: ProjectConfig | None = None,
                policy_dir: str | None = None) -> str:
    definitions = load_definitions(cwd, project=project, policy_dir=policy_dir).definitions
    return "\n".join(f"- {name}: {brief(d.description or '', 100)}"
                     for name, d in definitions.items())


def lead_system_prompt(team: str, cwd: str, approvals: str, coordinator: bool,
                       max_teammates: int, teammate_model: str, mode: str = "default",
                       project: ProjectConfig | None = None, policy_dir: str | None = None
                       ) -> str:
    lines = [HOW_TO_LEAD, "", "# This session",
             f"Team: `{team}`; you are `team-lead@{team}`. Working directory: {cwd}.",
             f"Teammates: at most {max_teammates} running at once; default model"
             f" {teammate_model} (`shell` is an offline worker that runs the shell commands it is"
             " given: fenced ```sh blocks or lines starting with `$ `).",
             f"Your permission mode is {mode}: a teammate's permission_mode (SpawnTeammate,"
             " AnswerPlan) may be at most that.",
             "Agent types for SpawnTeammate:", agent_types(cwd, project, policy_dir)]
    if coordinator:
        lines.append("You are a coordinator: you have only the team tools. Delegate all reading,"
                     " running and editing to teammates, or to a typed subagent (Agent with a"
                     " subagent_type).")
    if approvals == "lead":
        lines.append("You answer your teammates' permission requests (AnswerPermission) and"
                     " plans (AnswerPlan): approve what serves the task and is safe; deny with"
                     " a reason otherwise.")
    else:
        lines.append("The person answers your teammates' permission requests and plans; you"
                     " are told the outcome in the <team-status> block.")
    lines += ["", "# Environment",
              f"Platform: {platform.system().lower()}; today's date: {time.strftime('%Y-%m-%d')}."]
    return "\n".join(lines)
