"""Every error swarm raises on purpose (and the BaseExceptions that unwind a turn, a thread or
the process on a signal). The CLI maps `exit_code` to the process exit status."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager


class SwarmError(Exception):
    """Base class: an operation failed (exit 1)."""

    exit_code = 1


class BadInputError(SwarmError):
    """The caller asked for something malformed or unknown (exit 2)."""

    exit_code = 2


class InvalidNameError(BadInputError):
    """A team or agent name does not match the allowed pattern."""


class NotFoundError(BadInputError):
    """A team, member, task or request does not exist."""


class UnknownRecipientError(NotFoundError):
    """A message was addressed to someone who is not a member of the team."""


class TooLargeError(BadInputError):
    """A text field (message body, summary, task subject...) exceeds its size limit."""


class MessageTooLargeError(TooLargeError):
    """One message exceeds the size limit."""


class ProtocolError(BadInputError):
    """A structured message is malformed or not allowed here (e.g. a structured broadcast)."""


class NotAllowedError(BadInputError):
    """A member asked for more than it may: to move another member's task, or to grant a
    permission mode above its own (exit 2)."""


class TaskConflictError(SwarmError):
    """A task move was refused: already owned, completed, or blocked."""


class LockTimeoutError(SwarmError):
    """A lock stayed taken past a deadline (its holder is stopped or hung)."""


class PartialSendError(SwarmError):
    """A send stopped part-way (interrupted, or a later recipient failed): the message says which
    recipients have it. Exit 130 when interrupted, else 1."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class StoreUnavailableError(SwarmError):
    """The network store (SWARM_STORE=redis://...) cannot be reached or refused us (exit 1)."""


class StoreFullError(StoreUnavailableError):
    """The network store is at its memory limit (maxmemory, noeviction): a write was refused
    whole, nothing of it written (exit 1)."""


class TeamGoneError(SwarmError):
    """A team's document (config.json, its Redis key) is gone or was corrupt while something of
    the team is left (its agents' state): not bad input, a failure with a way out."""


class TeamBusyError(SwarmError):
    """A team still has live member processes."""


class OperationFailedError(SwarmError):
    """Something ran but did not succeed (an agent refused, died, or failed)."""


class ModelAPIError(OperationFailedError):
    """A model provider's API refused or kept failing a request (auth, bad request, retries
    spent), or its client could not be set up."""


class RecipientStoppedError(OperationFailedError):
    """A message's recipient has exited or died: it will not read it (`swarm send
    --wait-read`)."""


class GitError(SwarmError):
    """A git command swarm ran failed (a worktree or merge operation)."""


class WaitTimeoutError(SwarmError):
    """`swarm wait` (or `swarm send --wait-read`) ran out of time (exit 124)."""

    exit_code = 124


class SessionInterrupted(SwarmError):
    """The person (or a signal) ended a headless session early."""

    exit_code = 130


class TmuxError(SwarmError):
    """A tmux command failed (no space for a pane, the server went away, ...)."""


class ITerm2Error(SwarmError):
    """osascript failed (iTerm2 not running, automation permission refused, ...)."""


class SshError(SwarmError):
    """An ssh call failed (host unreachable, authentication refused, a remote step failed)."""


class MissingExtraError(BadInputError):
    """What was asked for needs an optional extra that is not installed (exit 2)."""

    def __init__(self, what: str, extra: str) -> None:
        super().__init__(f"{what} needs the optional `{extra}` extra: {install_extra(extra)}")


DISTRIBUTION = "swarm-teams"  # the name on PyPI (`swarm` is another project's)


def install_extra(extra: str) -> str:
    """How to add an optional extra to this install, in one line: pip's way, and pipx's (inject
    the extra's own requirements, read from the installed metadata: pyproject.toml's
    optional-dependencies, so this never goes stale)."""
    import re
    import shlex
    from importlib import metadata

    line = f"pip install '{DISTRIBUTION}[{extra}]'"
    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return line
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    wanted = [r.partition(";")[0].strip() for r in requires
              if marker.search(r.partition(";")[2])]
    if not wanted:
        return line
    return f"{line} (pipx: pipx inject {DISTRIBUTION} {' '.join(map(shlex.quote, wanted))})"


# -- inside a process: a tool's failure, and signals that unwind a turn or a thread -----------
class ToolError(Exception):
    """Raised inside a tool; becomes an error result, never a crash."""


class TurnInterrupted(BaseException):
    """Raised from a signal handler to abandon the current turn. A BaseException, so that no
    `except Exception` on the way (the model SDK's, a retry loop's) can swallow it."""


class AgentStopped(BaseException):
    """SIGTERM/SIGHUP: leave whatever we are doing and exit. A BaseException, so no `except
    Exception` on the way (the model SDK, a retry loop) can swallow it."""


class SubagentStopped(BaseException):
    """Leave the subagent's thread now (it was stopped, or a newer run replaced this one). A
    BaseException, so no `except Exception` on the way can swallow it."""


class StoppedBySignal(BaseException):
    """A signal arrived before the event loop took the signals over."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_OS_ERRORS = {
    errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system", errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted", errno.ENOENT: "no such file or directory",
    errno.EMFILE: "too many open files",
}


@contextmanager
def from_origin(origin: str | None) -> Iterator[None]:
    """A BadInputError about a value that came from `origin` (a file and its key, a variable)
    begins with it, so the person knows what to fix; None: a flag, said as it is."""
    try:
        yield
    except BadInputError as exc:
        if origin and exc.args and isinstance(exc.args[0], str):
            exc.args = (f"{origin}: {exc.args[0]}", *exc.args[1:])
        raise


def describe_error(exc: BaseException) -> str:
    """One line saying what failed and where: `disk full writing /x/y (ENOSPC)` rather than
    `unexpected OSError`."""
    if isinstance(exc, OSError) and exc.errno is not None:
        what = _OS_ERRORS.get(exc.errno) or (exc.strerror or "OS error").lower()
        code = errno.errorcode.get(exc.errno, str(exc.errno))
        where = f" at {exc.filename}" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) and exc.filename:
            where = f" writing {exc.filename}"
        return f"{what}{where} ({code})"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
