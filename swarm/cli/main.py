"""Entry point: a lazy Click group and the one place errors become `swarm: error:` lines."""

from __future__ import annotations

import gc
import importlib
import importlib.util
import sys
import traceback

import click

from swarm import __version__, settings
from swarm.big_import import big_import
from swarm.cli.helptext import examples
from swarm.core.text.terminal import visible
from swarm.errors import BadInputError, SwarmError, describe_error
from swarm.log import configure as configure_logging

# command name -> "module:attribute"; modules are imported only when their command runs, so
# `swarm send` never loads the model SDK or libtmux.
COMMANDS: dict[str, str] = {
    "team": "swarm.cli.team:team",
    "send": "swarm.cli.messaging:send",
    "inbox": "swarm.cli.messaging:inbox",
    "tasks": "swarm.cli.tasks:tasks",
    "spawn": "swarm.cli.spawn:spawn",
    "agent": "swarm.cli.agent:agent",
    "status": "swarm.cli.status:status",
    "wait": "swarm.cli.lifecycle:wait",
    "shutdown": "swarm.cli.lifecycle:shutdown",
    "interrupt": "swarm.cli.lifecycle:interrupt",
    "kill": "swarm.cli.lifecycle:kill",
    "respawn": "swarm.cli.lifecycle:respawn",
    "mode": "swarm.cli.lifecycle:mode",
    "logs": "swarm.cli.logs:logs",
    "transcript": "swarm.cli.logs:transcript",
    "permissions": "swarm.cli.permissions:permissions",
    "plans": "swarm.cli.plans:plans",
    "agents": "swarm.cli.agents:agents",
    "attach": "swarm.cli.panes:attach",
    "pane": "swarm.cli.panes:pane",
    "doctor": "swarm.cli.doctor:doctor",
    "demo": "swarm.cli.demo:demo",
    "worktrees": "swarm.cli.worktrees:worktrees",
    "merge": "swarm.cli.worktrees:merge",
    "diff": "swarm.cli.diff:diff",
    "report": "swarm.cli.report:report",
    "replay": "swarm.cli.replay:replay",
    "mcp": "swarm.cli.mcp:mcp",
    "lead": "swarm.cli.lead:lead",
    "acp": "swarm.cli.acp:acp",
    "trust": "swarm.cli.trust:trust",
    "completion": "swarm.cli.completion:completion",
    "config": "swarm.cli.config:config",
    "top": "swarm.cli.top:top",
}

# What `swarm --help` lists beside each command, so that it imports no command module (a test
# keeps each line equal to the command's own short help). A command missing here is imported.
SUMMARIES: dict[str, str] = {
    "agent": "Run a teammate process (swarm spawn starts this for you).",
    "acp": "Run swarm as an ACP agent on stdin/stdout, for an editor to start.",
    "agents": "List and show agent definitions.",
    "attach": "Open the team's tmux session (NAME: the one on that teammate's host).",
    "completion": "Print the shell completion script for bash, zsh or fish.",
    "config": "Show the user's defaults ($SWARM_HOME/config.toml).",
    "demo": "Run an offline team of three shell workers on this directory.",
    "diff": "Show a teammate's changes.",
    "doctor": "Check what swarm can use here, and find damage under SWARM_HOME.",
    "inbox": "Show a mailbox (default: team-lead's), or `inbox show ID` for one message, whole.",
    "interrupt": "Abort a teammate's current turn.",
    "kill": "End a teammate's process now (its tasks go back to pending).",
    "lead": "An LLM lead turns one request into a coordinated team.",
    "logs": "Print a teammate's output log.",
    "mcp": "MCP servers (from .mcp.json and $SWARM_HOME/mcp.json).",
    "merge": "Merge a member's worktree branch into the lead's checkout.",
    "mode": "Change a teammate's permission mode, from its next tool call.",
    "pane": "Hide a teammate's tmux pane and show it again.",
    "permissions": "Answer teammates' requests to use tools.",
    "plans": "Review plans from plan-mode teammates.",
    "report": "What a team did: per member turns, tokens, cost and time.",
    "replay": "Run a recorded team job again offline and report where it diverged.",
    "respawn": "Restart a dead or exited teammate.",
    "send": "Send a message to a member, or '*' for all.",
    "shutdown": "Ask a teammate (or --all) to finish and exit.",
    "spawn": "Start a teammate NAME in its own pane (or hidden).",
    "status": "Show what each teammate is doing.",
    "tasks": "Add, list, show, update, claim and release tasks.",
    "team": "Create, list, show and delete teams; remove a member.",
    "top": "One live screen for the whole team, answering requests with one key.",
    "transcript": "Print everything a teammate's model saw and said.",
    "trust": "Show what the project's configuration would do, and trust it.",
    "wait": "Wait for idle teammates, finished tasks, or exits.",
    "worktrees": "List members' worktrees.",
}


# click >= 8.2 renamed it; the old name is gone in some releases.
_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", None
) or click.exceptions.NoArgsIsHelp  # type: ignore[attr-defined]


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _exists(COMMANDS[name]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not _exists(target):
            return None
        module, _, attr = target.partition(":")
        with big_import():  # `swarm agent`'s runtime: ~1/4 less CPU without the collector's passes
            command = getattr(importlib.import_module(module), attr)
            from swarm.cli.authority import guard  # what a teammate's shell may not run
        assert isinstance(command, click.Command)
        return guard(command, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name in COMMANDS or name.startswith("-") or ctx.resilient_parsing:
            return super().resolve_command(ctx, args)
        import difflib  # only for a mistyped command

        close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise click.UsageError(f"No such command {name!r}.{hint}", ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from SUMMARIES: `swarm --help` imports no command module."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # A stand-in command shortens the summary exactly as Click shortens a docstring.
            command = (click.Command(name, help=SUMMARIES[name]) if name in SUMMARIES
                       else self.get_command(ctx, name))
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _exists(target: str) -> bool:
    module = target.partition(":")[0]
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=examples(
                 "swarm demo                  # an offline team of shell workers, to watch",
                 "export SWARM_TEAM=$(swarm team create alpha)",
                 "swarm spawn worker --prompt 'count the TODOs in src/'",
                 "swarm status",
                 "swarm COMMAND --help        # every command's options, with examples"))
@click.version_option(__version__, "-V", "--version", prog_name="swarm")
@click.option("--verbose", "-v", is_flag=True, help="Show debug lines on stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Run teams of LLM agents from a shell."""
    configure_logging(verbose=verbose)
    if ctx.invoked_subcommand != "doctor":  # doctor reports it, among the rest
        _check_home()


def _check_home() -> None:
    """SWARM_HOME (or the nearest of its parents that exists) must be a directory: a file there
    would make every team quietly absent ("no teams") rather than an error."""
    home = settings.home()
    for place in (home, *home.parents):
        if place.exists():
            if not place.is_dir():
                raise BadInputError(f"SWARM_HOME {home} is not a directory")
            return


def main(argv: list[str] | None = None) -> None:
    if settings.completing():
        _complete(argv)
    debug = settings.debug()
    try:
        _check_utf8(sys.argv[1:] if argv is None else argv)
        cli.main(args=argv, prog_name="swarm", standalone_mode=False)
    except SwarmError as exc:
        if debug:
            _print_traceback()
        _fail(str(exc), exc.exit_code)
    except _NO_ARGS_IS_HELP as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
        sys.exit(2)
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        _fail(f"{exc.format_message()}{hint}", 2)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # a bug: one clear line, the traceback only when asked
        if debug:
            _print_traceback()
        if isinstance(exc, OSError):  # say what failed and where ("disk full writing ...")
            _fail(describe_error(exc), 1)
        _fail(f"unexpected {type(exc).__name__}: {exc} (rerun with SWARM_DEBUG=1 for details)", 1)
    sys.exit(0)


def _check_utf8(args: list[str]) -> None:
    """Every argument must be UTF-8 text: bytes that are not arrive as lone surrogates
    (surrogateescape), which no team file, mailbox or task can hold. Checked before any
    command runs, so nothing is half done."""
    for number, arg in enumerate(args, 1):
        try:
            arg.encode()
        except UnicodeEncodeError as exc:
            try:
                raw = arg.encode("utf-8", "surrogateescape")  # the bytes as they were given
            except UnicodeEncodeError:
                raw = arg.encode("utf-8", "backslashreplace")
            shown = raw.decode("utf-8", "backslashreplace")
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise BadInputError(f"argument {number} is not UTF-8 text (character {exc.start}):"
                                f" {shown}") from None


def _complete(argv: list[str] | None) -> None:
    """A Tab: Click prints the completions and exits; anything that fails prints nothing."""
    try:
        cli.main(args=argv, prog_name="swarm", standalone_mode=False)
    except Exception:
        sys.exit(1)
    sys.exit(0)


def _print_traceback() -> None:

    traceback.print_exc()


def _fail(message: str, code: int) -> None:
    click.echo(f"swarm: error: {visible(message)}", err=True)  # errors quote team data too
    sys.exit(code)


def run() -> None:
    """The `swarm` command: `main`, then a quick end of the process."""
    try:
        main()
    finally:
        # Everything left lives until the process ends: frozen, it is spared the collector's
        # last full passes at exit (~15 % of a short command's CPU).
        gc.freeze()
