"""Entry point: a lazy Click group and the one place errors become `swarm: error:` lines."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback

import click

from swarm import __version__, settings
from swarm.core.terminal import visible
from swarm.errors import SwarmError, describe_error
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
    "doctor": "swarm.cli.doctor:doctor",
    "demo": "swarm.cli.demo:demo",
    "worktrees": "swarm.cli.worktrees:worktrees",
    "merge": "swarm.cli.worktrees:merge",
    "report": "swarm.cli.report:report",
    "mcp": "swarm.cli.mcp:mcp",
    "lead": "swarm.cli.lead:lead",
    "trust": "swarm.cli.trust:trust",
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
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command


def _exists(target: str) -> bool:
    module = target.partition(":")[0]
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="swarm")
@click.option("--verbose", "-v", is_flag=True, help="Show debug lines on stderr.")
def cli(verbose: bool) -> None:
    """Run teams of LLM agents from a shell."""
    configure_logging(verbose=verbose)


def main(argv: list[str] | None = None) -> None:
    debug = settings.debug()
    try:
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


def _print_traceback() -> None:

    traceback.print_exc()


def _fail(message: str, code: int) -> None:
    click.echo(f"swarm: error: {visible(message)}", err=True)  # errors quote team data too
    sys.exit(code)
