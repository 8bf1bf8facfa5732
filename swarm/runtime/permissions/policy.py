"""The permission policy of one agent: its mode, the mode it works in after plan approval, its
rules and the team's, the check before every tool call, and what to do when the check asks.

The lead, teammates and subagents all check through a `PermissionPolicy`; only what happens on
"ask" differs (ask the lead and wait, or deny at once in the background).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from swarm.core.records.permissions import PERMISSION_MODES, Decision
from swarm.core.records.protocol import PlanApprovalResponse
from swarm.core.records.state import Usage
from swarm.core.shell import parse as shellparse
from swarm.core.shell import rules
from swarm.core.shell.auto_rules import ask_rule, set_aside
from swarm.core.shell.forbidden import forbidden
from swarm.core.shell.protected import is_protected, own_file
from swarm.core.shell.writes import protected_writes
from swarm.core.store.filecache import ChangeCache
from swarm.core.team import decisions
from swarm.core.team.review import call_line
from swarm.core.team.scopes import scope_denial
from swarm.core.trust.user_config import lasting_ask_rules, lasting_rules
from swarm.runtime.permissions.auto import AutoTiers
from swarm.runtime.permissions.reviewer import Review
from swarm.runtime.turn.hooks import ToolHooks

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from swarm.core.records.team_config import Member
    from swarm.core.team.team import Team
    from swarm.runtime.tools.base import Tool


class Asks(Protocol):
    """Who answers an "ask": the lead, through the mailbox, for a teammate
    (`swarm.runtime.permissions.asking.Asker`); the person at the terminal for the lead itself."""

    def permission(self, tool: Tool, args: dict[str, Any], use_id: str,
                   why: Decision) -> Decision: ...

    def plan(self, plan: str) -> PlanApprovalResponse | None: ...


@dataclass
class PermissionPolicy:
    team: Team
    member: Member
    cwd: Path
    mode: str
    working_mode: str  # the mode a plan-mode agent switches to once its plan is approved
    asker: Asks | None = None  # None: never ask (background), deny instead
    # The user's PreToolUse hooks: after the deny rules, before allow or ask; a Decision
    # blocks the call.
    tool_hooks: ToolHooks = field(default_factory=ToolHooks)
    # The user's lasting rules (config.toml's [permissions]), read once at start.
    user_rules: tuple[list[str], list[str], list[str]] = field(
        default_factory=lambda: ([], [], []))
    # Files acceptEdits lets it write though protected: its own memory file (core.agents.memory).
    own_files: tuple[Path, ...] = ()
    # Tools it was given for those files alone (memory_tools): any other path is denied.
    own_only: frozenset[str] = frozenset()
    # Where a model reviewer's spend goes: the usage of the member whose process this is (so its
    # budgets and the team's count it); None: the decision record alone has it.
    on_spend: Callable[[Usage], None] | None = None
    _team_rules: ChangeCache[list[str]] | None = field(default=None, repr=False)
    _auto: AutoTiers | None = field(default=None, repr=False)

    @property
    def auto(self) -> AutoTiers:
        """auto's safe tier and reviewer (its git check and verdict cache live as long)."""
        if self._auto is None:
            self._auto = AutoTiers(self.team, self.member, self.cwd, self.own_files)
        return self._auto

    @classmethod
    def for_member(cls, team: Team, member: Member, cwd: Path, asker: Asks | None,
                   mode: str | None = None,
                   tool_hooks: ToolHooks | None = None) -> PermissionPolicy:
        working = member.permission_mode if member.permission_mode != "plan" else "acceptEdits"
        start = mode or ("plan" if member.plan_mode_required else member.permission_mode)
        return cls(team=team, member=member, cwd=cwd, mode=start, working_mode=working,
                   asker=asker, tool_hooks=tool_hooks or ToolHooks(),
                   user_rules=(*lasting_rules(), lasting_ask_rules()))

    def team_rules(self) -> list[str]:
        """The team file's "always allow" rules and the member's own as the file has them now
        (a rule added at its scope while it runs), read again only when the file changed."""
        if self._team_rules is None:
            self._team_rules = ChangeCache(self.team.config_key, self._rules_now)
        return self._team_rules.get()

    def _rules_now(self) -> list[str]:
        config = self.team.config()
        me = config.member(self.member.name)
        return [*config.allowed_rules, *(me.allow_rules if me is not None else [])]

    def out_of_scope(self, tool: Tool, args: dict[str, Any]) -> Decision | None:
        """File scopes on tasks (core/team/scopes.py): in every mode, bypassPermissions too."""
        if not tool.edits_files:
            return None
        denial = scope_denial(self.team, self.member.name, rules.tool_path(args, self.cwd))
        return None if denial is None else Decision("deny", denial)

    def not_its_own(self, tool: Tool, args: dict[str, Any]) -> Decision | None:
        """A tool given for its memory file alone (`own_only`), on any other path: denied."""
        if tool.name not in self.own_only:
            return None
        path = rules.tool_path(args, self.cwd)
        if path is not None and any(own_file(path, mine) for mine in self.own_files):
            return None
        mine = ", ".join(str(p) for p in self.own_files)
        return Decision("deny", f"{tool.name} is yours for your memory file ({mine}) only")

    def check(self, tool: Tool, args: dict[str, Any], use_id: str,
              must_ask: str | None = None) -> Decision:
        """`must_ask`: why what the rules would allow is asked anyway (an agent CLI's command
        whose directory swarm cannot know); a deny still wins. Every decision is recorded
        (core.team.decisions) with its tier, who decided and why."""
        start = time.perf_counter()
        decision, review = self.decide(tool, args, must_ask)
        decided_ms = (time.perf_counter() - start) * 1000
        if review is not None and review.usage is not None and self.on_spend is not None:
            self.on_spend(review.usage)
        who = "reviewer" if review is not None and review.verdict is not None else "rules"
        asked: dict[str, Any] | None = None
        if decision.behavior == "ask":
            if self.asker is None:
                decision = Decision("deny", f"{decision.reason}; nobody can be asked here",
                                    tier=decision.tier)
            else:
                waited = time.perf_counter()
                answer = self.asker.permission(tool, args, use_id, decision)
                asked = {"wait_ms": round((time.perf_counter() - waited) * 1000, 1),
                         "why": decision.reason, "person_only": decision.person_only}
                who = answer.by or ("person" if decision.person_only else "lead or person")
                if answer.behavior == "allow" and answer.updated_input is not None:
                    edited = answer.updated_input  # the edited path: checked again
                    answer = self.not_its_own(tool, edited) or self.out_of_scope(
                        tool, edited) or answer
                decision = Decision(answer.behavior, answer.reason, answer.rule,
                                    answer.updated_input, tier=decision.tier,
                                    person_only=decision.person_only, by=answer.by)
        self._record(tool, args, use_id, decision, who, review, asked, decided_ms)
        return decision

    def decide(self, tool: Tool, args: dict[str, Any], must_ask: str | None = None,
               dry: bool = False) -> tuple[Decision, Review | None]:
        """The decision before anyone is asked: allow, deny or ask (and the review, if any).
        `dry` (`swarm permissions check`): run nothing, neither hooks nor the reviewer."""
        scoped = self.not_its_own(tool, args) or self.out_of_scope(tool, args)
        if scoped is not None:
            return _tiered(scoped, "scope"), None
        found = forbidden(tool.name, args, self.cwd, self.auto.writable()[-1])
        if found is not None:
            behavior, why = found
            return Decision("deny" if behavior == "deny" else "ask", f"forbidden: {why}",
                            tier="forbidden", person_only=True), None
        ask = ask_rule(tool.name, args, self.cwd,
                       [*self.member.ask_rules, *self.user_rules[2]])
        if ask is not None:
            return Decision("ask", f"ask rule {ask}: a person decides", ask, tier="ask",
                            person_only=True), None
        allow = [*self.member.allow_rules, *self.team_rules(), *self.user_rules[0]]
        auto = self.mode == "auto"
        if auto:
            allow, _ = set_aside(allow)
        decision = rules.check(
            tool.name, args, mode="default" if auto else self.mode, read_only=tool.read_only,
            edits_files=tool.edits_files, cwd=self.cwd, allow=allow,
            deny=[*self.member.deny_rules, *self.user_rules[1]], own=self.own_files,
        )
        log.debug("%s: %s (%s)", tool.name, decision.behavior, decision.reason)
        if decision.behavior == "deny":
            return _tiered(decision, "deny rule" if decision.rule else "mode"), None
        blocked = None if dry else self.tool_hooks.pre_tool_use(tool, args)
        if blocked is not None:
            return _tiered(blocked, "hook"), None
        if must_ask is not None and decision.behavior == "allow":
            return Decision("ask", must_ask, tier="mode"), None
        if decision.behavior == "allow":
            tier = "allow rule" if decision.rule else "safe" if auto else "mode"
            return _tiered(decision, tier), None
        person = self._person_only(tool, args, decision)
        if person is not None:
            return person, None
        if not auto:
            return _tiered(decision, "mode"), None
        why_not = self.auto.why_not_safe(tool, args)
        if why_not is None:
            return Decision("allow", "auto: proven safe", tier="safe",
                            env=self.auto.safe_env(tool, args)), None
        if dry:
            return Decision("ask", why_not, tier="reviewer"), None
        return self.auto.review(tool, args, self.mode, why_not)

    def _person_only(self, tool: Tool, args: dict[str, Any], decision: Decision
                     ) -> Decision | None:
        """An ask no reviewer may answer: a deny rule that may match, the lead's key, a write
        to a protected path."""
        if decision.rule is not None:  # a Bash deny rule that cannot be ruled out
            return Decision("ask", decision.reason, decision.rule, tier="deny rule",
                            person_only=True)
        if rules.reads_lead_key(tool.name, args, self.cwd):
            return Decision("ask", decision.reason, tier="forbidden", person_only=True)
        path = rules.tool_path(args, self.cwd) if tool.edits_files else None
        guarded = path is not None and is_protected(path, self.cwd) and not any(
            own_file(path, mine) for mine in self.own_files)
        if tool.name == "Bash":
            guarded = bool(protected_writes(shellparse.parse(str(args.get("command", ""))),
                                            self.cwd))
        if guarded:
            return Decision("ask", f"{decision.reason} (a protected path: a person decides)",
                            tier="ask", person_only=True)
        return None

    def _record(self, tool: Tool, args: dict[str, Any], use_id: str, decision: Decision,
                who: str, review: Review | None, asked: dict[str, Any] | None,
                decided_ms: float) -> None:
        try:
            decisions.append(self.team.name, self.member.name, {
                "tool": tool.name, "use_id": use_id, "call": call_line(tool.name, args),
                "mode": self.mode, "tier": decision.tier, "behavior": decision.behavior,
                "who": who, "why": decision.reason, "rule": decision.rule,
                "review": review.as_record() if review is not None else None,
                "asked": asked, "decide_ms": round(decided_ms, 3)})
        except OSError as exc:  # the record is for reading later: the call goes on
            log.warning("could not record a decision: %s", exc)

    def apply_plan_response(self, response: PlanApprovalResponse) -> bool:
        """Switch to the working mode on an approved plan; True when the mode changed."""
        if not response.approve or self.mode != "plan":
            return False
        wanted = response.permission_mode or self.working_mode
        if wanted in ("bypassPermissions", "plan") or wanted not in PERMISSION_MODES:
            wanted = "acceptEdits"  # never bypass for a plan-mode-required agent
        self.mode = wanted
        return True

    def exit_plan(self, plan: str) -> tuple[str, bool]:
        """ExitPlanMode: submit the plan and wait; (what the model is told, mode changed)."""
        if self.mode != "plan":
            return "You are not in plan mode; go ahead with the work.", False
        if self.asker is None:
            return "Plans cannot be submitted here.", False
        answer = self.asker.plan(plan)
        if answer is None:
            return "A shutdown was requested before your plan was answered.", False
        changed = self.apply_plan_response(answer)
        if answer.approve:
            note = f" Lead's note: {answer.feedback}" if answer.feedback else ""
            return (f"Your plan was approved. You are now in {self.mode} mode: carry it out."
                    + note), changed
        return ("Your plan was rejected. Feedback from the lead: "
                f"{answer.feedback or '(none)'}\nRevise the plan and submit it again with "
                "ExitPlanMode."), changed


def _tiered(decision: Decision, tier: str) -> Decision:
    return Decision(decision.behavior, decision.reason, decision.rule, decision.updated_input,
                    tier=decision.tier or tier, person_only=decision.person_only, by=decision.by)
