"""What a teammate's shell may not do: every `swarm` command and option that acts for
the lead or the person, in one table, refused in one line (exit 2) when the caller runs under a
teammate. The caller is found as the sender of a message is (`caller.current_agent_name`: the
`swarm agent` process above it, whatever its environment says), so a teammate's `Bash(swarm:*)`
lets it do what its tools let it do: speak as itself, work on tasks, read the team's state.

`LEAD_ONLY` maps a command's path (`team delete`; a group's path covers its subcommands, also
ones added later) to its rules, each refusing when its condition holds for the parsed
parameters; `TEAMMATE_MAY` names what a teammate runs freely. `guard` is called on every
command as main loads it, so no command module checks for itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import click

from swarm.cli.caller import current_agent_name
from swarm.core.records.names import LEAD_NAME
from swarm.core.store.liveness import agent_ancestor
from swarm.errors import BadInputError

Params = dict[str, Any]


def _always(params: Params, me: str) -> bool:
    return True


def _other(param: str, default: str | None = None) -> Callable[[Params, str], bool]:
    """The command acts on another member than the caller (`param` names it)."""
    return lambda params, me: str(params.get(param) or default or "").lower() != me


class Rule(NamedTuple):
    what: str  # shown: "`swarm <what>` is for the team lead"
    when: Callable[[Params, str], bool] = _always  # (parameters, the caller's name)


LEAD_ONLY: dict[str, tuple[Rule, ...]] = {
    # The lead's seat and the person's own acts.
    "lead": (Rule("lead"),),
    "acp": (Rule("acp"),),  # an editor's lead: the person answers its teammates through it
    # A member's process (spawn and resume start it). Its own environment names the member it
    # is, so only a `swarm agent` above it says a teammate started it.
    "agent": (Rule("agent", lambda p, me: agent_ancestor() is not None),),
    "trust": (Rule("trust", lambda p, me: not p.get("list_them")),),
    "config": (Rule("config"),),  # the person's defaults (reading them: `config show`)
    "demo": (Rule("demo"),),
    "replay": (Rule("replay"),),
    "attach": (Rule("attach"),),
    "pane": (Rule("pane"),),  # what the person sees is the person's (hide, show)
    "doctor": (Rule("doctor --fix", lambda p, me: bool(p.get("fix"))),),
    "report": (Rule("report --html", lambda p, me: p.get("html_path") is not None),),
    # The team: who is in it, how they run, what they may do.
    "team create": (Rule("team create"),),
    "team delete": (Rule("team delete"),),
    "team remove": (Rule("team remove"),),
    "team resume": (Rule("team resume"),),
    "team add": (Rule("team add"),),
    "spawn": (Rule("spawn"),),
    "respawn": (Rule("respawn"),),
    "kill": (Rule("kill"),),
    "shutdown": (Rule("shutdown"),),
    "interrupt": (Rule("interrupt", _other("name")),),
    "mode": (Rule("mode"),),
    "merge": (Rule("merge"),),  # it changes the lead's checkout
    "permissions approve": (Rule("permissions approve"),),  # --always adds a team rule
    "permissions deny": (Rule("permissions deny"),),
    "plans approve": (Rule("plans approve"),),
    "plans reject": (Rule("plans reject"),),
    # Speaking for someone else.
    "send": (Rule("send --from", lambda p, me: p.get("sender") is not None),
             Rule("send --wake", lambda p, me: bool(p.get("wake")))),
    "inbox": (Rule("inbox --mark-read", lambda p, me: bool(p.get("mark_read")) and
                   _other("name", LEAD_NAME)(p, me)),),
    "mcp serve": (Rule("mcp serve", lambda p, me: p.get("member") is None),
                  Rule("mcp serve --as another member", _other("member"))),
}

TEAMMATE_MAY = frozenset({
    "send", "inbox", "tasks add", "tasks list", "tasks show", "tasks update", "tasks claim",
    "tasks release", "status", "wait", "logs", "transcript", "report", "worktrees", "diff",
    "team list", "team show", "permissions list", "permissions check", "permissions log",
    "permissions suggest", "plans list", "agents list", "agents show",
    "mcp list", "mcp snippet", "mcp hub", "config show", "doctor", "interrupt", "completion",
    "top",  # to watch; what it does for the lead is checked action by action (cli.top_app)
})


def rules_for(path: str) -> tuple[Rule, ...]:
    """The rules of a command: its own, else its nearest group's."""
    words = path.split()
    for end in range(len(words), 0, -1):
        found = LEAD_ONLY.get(" ".join(words[:end]))
        if found is not None:
            return found
    return ()


def check(path: str, params: Params) -> None:
    """Refuse (exit 2) what `path` with these parameters does for the lead, from a teammate."""
    rules = LEAD_ONLY.get(path, () if path in TEAMMATE_MAY else rules_for(path))
    if not rules:
        return
    name = current_agent_name()
    if name is None or name == LEAD_NAME:
        return
    for rule in rules:
        if rule.when(params, name.lower()):
            raise BadInputError(
                f"`swarm {rule.what}` is for the team lead; it was run from the shell of "
                f"teammate {name}. Ask the lead with `swarm send team-lead ...`")


def guard(command: click.Command, path: str) -> click.Command:
    """Have every command under `command` check the table before it runs (once)."""
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            guard(sub, f"{path} {name}")
    elif command.callback is not None and not getattr(command.callback, "_guarded", False):
        command.callback = _guarded(command.callback, path)
    return command


def _guarded(callback: Callable[..., Any], path: str) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **params: Any) -> Any:
        check(path, params)
        return callback(*args, **params)

    run._guarded = True  # type: ignore[attr-defined]
    return run
