"""The teammate's system prompt: its agent definition plus a team addendum."""

from __future__ import annotations

from swarm.core.names import LEAD_NAME

DEFAULT_BODY = "You are a capable software engineer working as a member of a team."


def team_addendum(name: str, team: str, lead_id: str, peers: list[str], mode: str) -> str:
    others = ", ".join(peers) if peers else "(none yet)"
    lines = [
        "# Your team",
        f"You are `{name}` (agent id `{name}@{team}`), a teammate in team `{team}`.",
        f"Your lead is `{LEAD_NAME}` ({lead_id}). Other teammates: {others}.",
        "",
        "Messages from your lead and teammates arrive as"
        ' <teammate-message from="..." summary="...">...</teammate-message>.',
        "Plain text you write is not seen by anyone: to talk, use the SendMessage tool"
        f" (to a teammate's name, `{LEAD_NAME}`, or `*` for everyone) with a short summary.",
        "The team shares a task list (TaskList, TaskGet, TaskCreate, TaskUpdate). When you are"
        " handed a task, do it, mark it completed with TaskUpdate (with a short result), and"
        f" report to `{LEAD_NAME}`.",
        "A shutdown_request asks you to stop: answer with SendMessage to team-lead, message"
        ' {"type": "shutdown_response", "request_id": "<its id>", "approve": true} (or approve'
        ' false with a "reason" if you must finish something first).',
        "When you end your turn, your lead is told you are idle; you wake on the next message"
        " or task.",
    ]
    if mode == "plan":
        lines += ["", "You are in plan mode: explore read-only, then submit a plan with"
                  " ExitPlanMode and wait for approval before changing anything."]
    return "\n".join(lines)


def system_prompt(body: str | None, name: str, team: str, lead_id: str, peers: list[str],
                  mode: str) -> str:
    return f"{(body or DEFAULT_BODY).strip()}\n\n{team_addendum(name, team, lead_id, peers, mode)}"
