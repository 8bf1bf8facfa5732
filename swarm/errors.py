"""Every error swarm raises on purpose. The CLI maps `exit_code` to the process exit status."""

from __future__ import annotations


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


class MessageTooLargeError(BadInputError):
    """One message exceeds the size limit."""


class ProtocolError(BadInputError):
    """A structured message is malformed or not allowed here (e.g. a structured broadcast)."""


class TaskConflictError(SwarmError):
    """A task move was refused: already owned, completed, or blocked."""


class LockTimeoutError(SwarmError):
    """A lock stayed taken past a deadline (its holder is stopped or hung)."""


class TeamBusyError(SwarmError):
    """A team still has live member processes."""


class OperationFailedError(SwarmError):
    """Something ran but did not succeed (an agent refused, died, or failed)."""


class WaitTimeoutError(SwarmError):
    """`swarm wait` ran out of time (exit 124)."""

    exit_code = 124
