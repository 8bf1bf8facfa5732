"""`swarm diff NAME`: a teammate's changes (ops.diff finds them; this only renders them).

A teammate's file content is data: every line is made visible (its control characters print as
escapes) before swarm adds a colour of its own, and colours only go to a terminal."""

from __future__ import annotations

import sys

import click

from swarm.cli.common import emit, json_option, open_team, table, team_option
from swarm.cli.completion import complete_member
from swarm.cli.helptext import examples
from swarm.core.text.terminal import visible, visible_line
from swarm.ops.diff import MemberDiff, member_diff

# Diff lines by their first characters -> the ANSI colour they are drawn in.
_COLOURS = (("diff --git ", "1"), ("+++ ", "1"), ("--- ", "1"), ("@@", "36"), ("+", "32"),
            ("-", "31"))


@click.command(epilog=examples("swarm diff worker", "swarm diff worker --stat",
                               "swarm diff worker --team alpha --json"))
@click.argument("name", shell_complete=complete_member)
@click.option("--stat", is_flag=True, help="Only the files, each with its lines added and "
              "deleted.")
@team_option
@json_option
def diff(name: str, stat: bool, team_name: str | None, as_json: bool) -> None:
    """Show a teammate's changes.

    With a worktree: the worktree against the commit it branched from (its commits, uncommitted
    changes and new files). Without one: the files it wrote with Write and Edit, as a diff
    against HEAD where git knows them, else listed (Bash commands are not recorded). Exit 1
    when there is nothing to show.
    """
    found = member_diff(open_team(team_name), name)
    colour = not as_json and sys.stdout.isatty()
    emit(found.as_dict(), as_json, lambda _: _render(found, stat, colour), styled=True)


def _header(found: MemberDiff) -> str:
    count = f"{len(found.files)} file{'s' if len(found.files) != 1 else ''}"
    totals = f"+{found.added} -{found.deleted}"
    if found.source == "writes":
        outside = sum(f.status == "not in git" for f in found.files)
        count += f" ({outside} outside git)" if outside else ""
        return f"{found.member}: the files it wrote with Write and Edit: {count}, {totals}"
    where = "worktree" if found.source == "worktree" else "branch (its worktree is gone) in"
    return (f"{found.member}: {where} {found.where} (branch {found.branch}) against its base "
            f"{found.base[:10]}: {count}, {totals}")


def _render(found: MemberDiff, stat: bool, colour: bool) -> str:
    """The text: a header line, then the files (--stat) or the diff and the files it lacks.
    Every piece of data is made visible here (emit keeps only the colours added here)."""
    lines = [visible_line(_header(found))]
    if stat:
        rows = [[visible_line(f.path), f.status,
                 "binary" if f.added is None and f.status not in ("gone", "not in git")
                 else "" if f.added is None else f"+{f.added} -{f.deleted}"]
                for f in found.files]
        drawn = table(rows, ["", "", ""]).splitlines()[1:]  # no header row
        lines += [f" {row}" for row in drawn]
        count = len(found.files)
        lines.append(f"{count} file{'s' if count != 1 else ''} changed, "
                     f"+{found.added} -{found.deleted}")
        return "\n".join(lines)
    lines += [_paint(visible(line), colour) for line in found.diff.splitlines()]
    lines += [f"{f.status}: {visible_line(f.path)}" for f in found.files
              if f.status in ("unchanged", "gone", "not in git")]
    return "\n".join(lines)


def _paint(line: str, colour: bool) -> str:
    if not colour:
        return line
    for start, code in _COLOURS:
        if line.startswith(start):
            return f"\x1b[{code}m{line}\x1b[0m"
    return line
