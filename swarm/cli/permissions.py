"""`swarm permissions list | approve | deny | check | log`."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click
import msgspec

from swarm import settings
from swarm.cli.common import emit, json_option, open_team, table, team_option
from swarm.cli.completion import complete_request
from swarm.cli.helptext import examples
from swarm.core.team.attention import span
from swarm.core.text.real_input import exact_rule, typed_rule
from swarm.errors import BadInputError
from swarm.ops.approvals import (
    approve_permission,
    deny_permission,
    find_request,
    pending_permissions,
)
from swarm.ops.member.health import age_s

DENIED = "denied by the person"  # the teammate's reason when `deny` is given none
WHAT_WIDTH = 200  # past it, the cell says how much more there is (and to use --json)


@click.group(epilog=examples("swarm permissions list", "swarm permissions approve 3f2a9c1d"))
def permissions() -> None:
    """Answer teammates' requests to use tools."""


@permissions.command("list", epilog=examples(
    "swarm permissions list", "swarm permissions list --json"))
@team_option
@json_option
def list_requests(team_name: str | None, as_json: bool) -> None:
    """Pending permission requests, oldest first."""
    pending = pending_permissions(open_team(team_name))

    def human(_: Any) -> str:
        if not pending:
            return "(no pending permission requests)"
        timeout = settings.permission_timeout()  # the asker's, if it runs with the same one
        rows = [[p.request.request_id[:8], p.message.sender, p.request.tool_name,
                 p.shown(WHAT_WIDTH), p.message.timestamp[11:19],
                 span(timeout - age_s(p.message.timestamp))] for p in pending]
        return table(rows, ["ID", "FROM", "TOOL", "WHAT", "ASKED", "DENIED IN"])

    emit([p.as_dict() for p in pending], as_json, human)


@permissions.command("approve", epilog=examples(
    "swarm permissions approve 3f2a9c1d",
    "swarm permissions approve worker --always",
    "swarm permissions approve worker --rule 'Bash(make:*)'",
    """swarm permissions approve 3f2a9c1d --input '{"command": "make test"}'"""))
@click.argument("request_id", metavar="ID|NAME", shell_complete=complete_request)
@click.option("--always", is_flag=True,
              help="Add a team rule for exactly this call so no teammate asks again.")
@click.option("--rule", "typed", default=None, metavar="RULE",
              help="Add this team rule instead (as broad as you type it, e.g. 'Bash(make:*)').")
@click.option("--input", "new_input", default=None, help="Replace the tool input (JSON object).")
@click.option("--scope", type=click.Choice(["team", "member"]), default="team",
              show_default=True, help="Where --always or --rule adds its rule: the team's rules,"
              " or the requesting member's own.")
@team_option
def approve(request_id: str, always: bool, typed: str | None, new_input: str | None,
            scope: str, team_name: str | None) -> None:
    """Let the teammate run the tool call."""
    team = open_team(team_name)
    if scope == "member" and (always or typed):
        from swarm.ops.suggestions import add

        pending = find_request(team, request_id)  # the rule first: shown, then added
        rule = typed_rule(typed, pending.request.tool_name) if typed else None
        found = approve_permission(team, request_id, False, new_input)
        rule = rule or exact_rule(found.request.tool_name, found.request.input,
                                  Path(team.member(found.message.sender).cwd or "."))
        click.echo(f"adding a rule for {found.message.sender}: {rule}")
        add(team, found.message.sender, (rule,), "member")
        click.echo(f"approved {found.request.tool_name} for {found.message.sender}"
                   " (and added a member rule)")
        return
    found = approve_permission(team, request_id, always, new_input,
                               announce=lambda rule: click.echo(f"adding team rule: {rule}"),
                               typed=typed)
    note = " (and added a team rule)" if always or typed else ""
    click.echo(f"approved {found.request.tool_name} for {found.message.sender}{note}")


@permissions.command("suggest", epilog=examples("swarm permissions suggest 3f2a9c1d",
                                                "swarm permissions suggest --min 3"))
@click.argument("request_id", metavar="[ID|NAME]", required=False,
                shell_complete=complete_request)
@click.option("--min", "min_count", type=int, default=3, show_default=True,
              help="Without ID: calls approved at least this many times.")
@team_option
@json_option
def suggest(request_id: str | None, min_count: int, team_name: str | None,
            as_json: bool) -> None:
    """Rules that would cover a pending request, narrowest first, with their scopes; without
    ID, narrow rules for the calls people approved again and again."""
    from swarm.ops.suggestions import frequent, offer

    team = open_team(team_name)
    if request_id is not None:
        offers = [msgspec.structs.asdict(o) for o in offer(team, request_id)]

        def shown(_: Any) -> str:
            return table([[" ".join(o["rules"]), o["covers"], " | ".join(o["scopes"])]
                          for o in offers], ["RULES", "COVERS", "SCOPES"]) if offers else \
                "(no rule can cover it but the whole tool)"

        emit(offers, as_json, shown)
        return
    rows = frequent(team, min_count)

    def human(_: Any) -> str:
        return table([[r["member"], " ".join(r["rules"]), str(r["approved"])] for r in rows],
                     ["MEMBER", "RULES", "APPROVED"]) if rows else \
            f"(no call approved {min_count} times or more)"

    emit(rows, as_json, human)


@permissions.command("deny", epilog=examples(
    "swarm permissions deny 3f2a9c1d --reason 'use make clean, not rm -rf'"))
@click.argument("request_id", metavar="ID|NAME", shell_complete=complete_request)
@click.option("--reason", "-r", default=None,
              help="Why (the teammate's model reads it; default: denied by the person).")
@team_option
def deny(request_id: str, reason: str | None, team_name: str | None) -> None:
    """Refuse the tool call."""
    found = deny_permission(open_team(team_name), request_id,
                            DENIED if reason is None else reason)
    click.echo(f"denied {found.request.tool_name} for {found.message.sender}")


@permissions.command("check", epilog=examples(
    "swarm permissions check --as alice -- git status",
    "swarm permissions check --as alice --tool Edit --path src/app.py --json"))
@click.argument("command", nargs=-1)
@click.option("--as", "name", default=None, metavar="NAME",
              help="The member whose rules and mode decide (default: the lead).")
@click.option("--tool", default="Bash", show_default=True, help="The tool called.")
@click.option("--path", default=None, help="The file an Edit, Write or Read names.")
@team_option
@json_option
def check_call(command: tuple[str, ...], name: str | None, tool: str, path: str | None,
               team_name: str | None, as_json: bool) -> None:
    """Which tier would decide a call, and why; runs nothing (no hook, no reviewer)."""
    from swarm.ops.permission_check import check

    if tool == "Bash":
        if not command:
            raise BadInputError("give the command after --, e.g. `-- git status`")
        args: dict[str, Any] = {"command": shlex.join(command) if len(command) > 1
                                else command[0]}
    else:
        if path is None:
            raise BadInputError(f"--tool {tool} needs --path")
        args = {"file_path": path}
    result = check(open_team(team_name), name, tool, args)

    def human(_: Any) -> str:
        who = "a person" if result.person_only else "the person or the lead"
        lines = [f"tier: {result.tier}", f"decision: {result.behavior}"
                 + (f" ({who} is asked)" if result.behavior == "ask" else ""),
                 f"why: {result.why}", f"member: {result.member} ({result.mode})"]
        if result.rule:
            lines.append(f"rule: {result.rule}")
        if result.review_request is not None:
            lines += ["the reviewer would be shown:",
                      json.dumps(result.review_request, indent=2)]
        return "\n".join(lines)

    emit(msgspec.structs.asdict(result), as_json, human)


@permissions.command("log", epilog=examples("swarm permissions log alice",
                                            "swarm permissions log --json"))
@click.argument("name", required=False)
@team_option
@json_option
def log_decisions(name: str | None, team_name: str | None, as_json: bool) -> None:
    """Every permission decision: its tier, who decided and why."""
    from swarm.ops.permission_check import log_rows

    rows = log_rows(open_team(team_name), name)

    def human(_: Any) -> str:
        if not rows:
            return "(no decisions recorded)"
        return table([[str(r.get("ts", ""))[11:19], str(r["member"]), str(r.get("call", "")),
                       str(r.get("tier")), str(r.get("who")), str(r.get("behavior")),
                       str(r.get("why", ""))[:WHAT_WIDTH]] for r in rows],
                     ["AT", "MEMBER", "CALL", "TIER", "WHO", "DECISION", "WHY"])

    emit(rows, as_json, human)
