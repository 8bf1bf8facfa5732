"""The core's model of permissions: the modes and their order (the mode cap: a member grants at
most its own mode), and the verdict on one tool call (`Decision`), whoever reaches it: the Bash
rule engine (core.shell.rules), a permission policy, the lead or a hook."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from msgspec import Struct

from swarm.errors import BadInputError, NotAllowedError

PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "bypassPermissions")
# What each mode lets through, least first: a member grants at most its own mode
# (docs/design/trust.md). The one home of this order. `auto` runs what it proves safe, has a
# reviewer decide the rest and asks a person only when that matters (docs/design/auto.md).
MODE_ORDER = ("plan", "default", "acceptEdits", "auto", "bypassPermissions")
# Which step decided a call (the decision record, `swarm permissions check`), first match wins:
# forbidden and deny rules, ask rules, the rest of the rules and the mode, the safe tier, the
# reviewer; `person`/`lead` when one of them answered.
TIERS = ("forbidden", "deny rule", "ask", "scope", "hook", "allow rule", "mode", "safe",
         "reviewer", "person", "lead")


def mode_allows(cap: str, mode: str) -> bool:
    """May a member in mode `cap` grant `mode`? (An unknown mode ranks above every known one.)"""
    def rank(name: str) -> int:
        return MODE_ORDER.index(name) if name in MODE_ORDER else len(MODE_ORDER)

    return rank(mode) <= rank(cap)


class ModeCap(NamedTuple):
    """The most a grantor may grant: its own mode. `who` names it in the refusal."""

    who: str  # "the lead", or the member whose shell it is
    mode: str

    def check(self, mode: str) -> None:
        """Refuse (never silently lower) a grant above the cap."""
        if not mode_allows(self.mode, mode):
            raise NotAllowedError(f"permission mode {mode} is above {self.who}'s own ({self.mode}):"
                                  f" a member grants at most its own mode; ask for {self.mode} or"
                                  " lower")


def mode_at_most(wanted: str, ceiling: str) -> str:
    """`wanted`, lowered to `ceiling` when it would grant more (where nobody asked for a mode,
    e.g. a subagent's definition: lowering is the cap's one silent form)."""
    return wanted if mode_allows(ceiling, wanted) else ceiling


class Decision(Struct, frozen=True):
    behavior: Literal["allow", "deny", "ask"]
    reason: str
    rule: str | None = None
    updated_input: dict[str, Any] | None = None  # the lead edited the tool input when approving
    tier: str | None = None  # one of TIERS, where known
    # Ask only a person (an ask rule, a protected path, a deny rule that may match, a reviewer
    # with no verdict): never the lead's model.
    person_only: bool = False
    by: str | None = None  # who answered when asked (PermissionResponse.by)
    # Variables the command runs with (auto's safe git: git's code-running settings off, so a
    # change between the check and the run cannot make it run code).
    env: dict[str, str] | None = None


def validate_mode(mode: str) -> str:
    if mode not in PERMISSION_MODES:
        raise BadInputError(f"invalid permission mode {mode!r}: use one of {', '.join(PERMISSION_MODES)}")
    return mode
