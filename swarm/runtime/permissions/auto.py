"""The tiers auto adds to a member's permission policy (runtime.permissions.policy), after the
forbidden calls, the ask rules and the allow rules (with those granting any program set aside):

- the safe tier, with no model call: read-only tools, Bash that core.shell.readonly proves
  read-only (git only while its configuration cannot run code: core.shell.git_state), and
  Write/Edit inside the working directory and the member's file scope, outside protected paths;
- the reviewer (runtime.permissions.reviewer) for the rest: allow, deny (a tool result with its
  reason; the member goes on) or no verdict, which asks a person. After 3 denials in a row or 20
  in all (core.team.decisions) it asks a person until auto is set again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.core.records.permissions import Decision
from swarm.core.shell import parse as shellparse
from swarm.core.shell import rules
from swarm.core.shell.git_state import SAFE_GIT_ENV, GitCheck
from swarm.core.shell.protected import inside, is_protected, own_file
from swarm.core.shell.readonly import why_not_safe
from swarm.core.team import decisions
from swarm.core.team.review import build_request
from swarm.runtime.permissions.reviewer import Review, Reviewer

if TYPE_CHECKING:
    from swarm.core.records.team_config import Member
    from swarm.core.team.team import Team
    from swarm.runtime.tools.base import Tool


def repo_root(cwd: Path) -> Path | None:
    """The checkout `cwd` is in (the folder holding `.git`), or None."""
    here = cwd.resolve()
    return next((p for p in (here, *here.parents) if (p / ".git").exists()), None)


@dataclass
class AutoTiers:
    team: Team
    member: Member
    cwd: Path
    own: tuple[Path, ...] = ()
    _git: GitCheck | None = field(default=None, repr=False)
    _writable: tuple[Path, ...] | None = field(default=None, repr=False)
    _reviewer: Reviewer | None = field(default=None, repr=False)

    def writable(self) -> tuple[Path, ...]:
        """Where a member may write: programs there are never trusted as read-only (the cwd,
        then the checkout it is in)."""
        if self._writable is None:
            root = repo_root(self.cwd)
            self._writable = tuple(p for p in (self.cwd, root) if p is not None)
        return self._writable

    def git(self) -> GitCheck:
        if self._git is None:
            self._git = GitCheck(self.team.name, self.cwd, self.writable())
        return self._git

    def why_not_safe(self, tool: Tool, args: dict[str, Any]) -> str | None:
        """None when the call is in the safe tier; else why not (the reviewer is told)."""
        if tool.name == "Bash":
            return why_not_safe(str(args.get("command", "")), self.cwd, self.writable(),
                                self.git())
        if tool.edits_files:
            path = rules.tool_path(args, self.cwd)
            if path is None:
                return "it names no file"
            if any(own_file(path, mine) for mine in self.own):
                return None
            if is_protected(path, self.cwd):
                return f"{path} is a protected path"
            if not inside(path, self.cwd):
                return f"{path} is outside the working directory"
            return None
        return f"{tool.name} is not a read-only tool"

    def safe_env(self, tool: Tool, args: dict[str, Any]) -> dict[str, str] | None:
        """A safe Bash call that runs git runs it with git's code-running settings off."""
        if tool.name != "Bash" or "GIT_CONFIG_COUNT" in os.environ:
            return None
        runs_git = any(c.program == "git" for c in shellparse.parse(str(args.get("command"))))
        return dict(SAFE_GIT_ENV) if runs_git else None

    def reviewer(self) -> Reviewer | None:
        spec = self.member.reviewer or "none"
        if spec == "none":
            return None
        if self._reviewer is None:
            self._reviewer = Reviewer(self.team, spec, self.member.name)
        return self._reviewer

    def review(self, tool: Tool, args: dict[str, Any], mode: str, why: str
               ) -> tuple[Decision, Review | None]:
        """The reviewer's decision: allow, deny, or ask (person only) with the reason."""
        paused = decisions.paused(self.team.name, self.member.name)
        if paused:
            return Decision("ask", f"auto paused: {paused}; a person decides until auto is set"
                            " again", tier="reviewer", person_only=True), None
        reviewer = self.reviewer()
        if reviewer is None:
            return Decision("ask", f"no reviewer ({why})", tier="reviewer"), None
        request = build_request(self.team, self.member, tool.name, args, str(self.cwd), mode,
                                why)
        key = hashlib.sha256(json.dumps(
            [self.member.name, tool.name, request["pending"]["input"], str(self.cwd),
             request["assignment"]], sort_keys=True, default=str).encode()).hexdigest()
        done = reviewer.review(request, key, str(self.cwd))
        if done.verdict is None:
            return Decision("ask", f"the reviewer gave no verdict: {done.error}",
                            tier="reviewer", person_only=True), done
        verdict = done.verdict
        if verdict.decision == "allow":
            return Decision("allow", f"the reviewer allowed it ({verdict.risk} risk):"
                            f" {verdict.reason}", tier="reviewer"), done
        return Decision("deny", f"the reviewer denied it ({verdict.risk} risk): {verdict.reason}",
                        tier="reviewer"), done
