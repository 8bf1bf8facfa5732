"""auto's reviewer: given what the person and the lead asked of a member and the member's calls
(core.team.review builds it), it answers allow or deny for one call. It lives in the runtime:
the permission policy calls it, and a `model:` reviewer is one of swarm's models.

- `command:PROG`: PROG runs with no arguments in the member's cwd, the request as one JSON
  object on stdin; it prints one JSON verdict. An exit code other than 0, a signal, a timeout
  (SWARM_REVIEW_TIMEOUT, default 60 s; the process group is killed) or anything but one verdict
  is no verdict.
- `model:NAME`: a fresh one-message conversation with NAME (any model spec), no tools; the
  first JSON object of its reply is the verdict. An error is no verdict.
- `lead`: the lead member's model, called the same way (never its conversation).
- `none`: no reviewer: a person is asked.

No verdict never allows or denies: the policy asks a person. Verdicts are cached per member and
call for the life of the process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from swarm import settings
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.state import Usage
from swarm.core.team import decisions
from swarm.core.team.review import Verdict, parse_verdict
from swarm.core.team.team import Team
from swarm.errors import BadInputError

KINDS = ("command", "model")
NAMES = ("lead", "none")
SYSTEM = (
    "You are swarm's permission reviewer (SWARM-REVIEWER). A teammate in an agent team wants to"
    " make the pending tool call. You see what the person and the lead asked of it (its"
    " assignment) and the calls it made, never its own words or any tool output. Allow the"
    " call when it serves the assignment and its effects are contained to the teammate's work;"
    " deny it when it is outside the assignment, destructive, exfiltrates data, reaches"
    " networks or systems the assignment does not need, or when you are unsure. Answer with"
    ' one JSON object only: {"decision": "allow" | "deny", "risk": "low" | "medium" | "high",'
    ' "reason": "one line"}.')


def check_reviewer(spec: str | None) -> str | None:
    """The spec, checked (a `command:` made absolute), or one line saying what is wrong."""
    if spec is None or not spec.strip():
        return None
    spec = spec.strip()
    if spec in NAMES:
        return spec
    kind, _, rest = spec.partition(":")
    if kind not in KINDS or not rest.strip():
        raise BadInputError(f"invalid --reviewer {spec!r}: use lead, none, command:PROG or"
                            " model:NAME")
    if kind == "command":
        prog = os.path.abspath(os.path.expanduser(rest.strip()))
        if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
            raise BadInputError(f"--reviewer command:{rest}: {prog} is not an executable file")
        return f"command:{prog}"
    return spec


@dataclass
class Review:
    """One review: the verdict or why there is none, and what it cost."""

    spec: str
    verdict: Verdict | None
    error: str | None = None
    ms: float = 0.0
    cached: bool = False
    key: str = ""  # the member, the call and its assignment, hashed: the cache's key
    # A model reviewer's usage as priced: the member's own spend (PermissionPolicy.on_spend).
    usage: Usage | None = None

    @property
    def tokens(self) -> dict[str, int]:
        if self.usage is None:
            return {}
        return {"input": self.usage.all_input_tokens, "output": self.usage.output_tokens}

    @property
    def cost_usd(self) -> float:
        return self.usage.cost_usd if self.usage is not None else 0.0

    def as_record(self) -> dict[str, Any]:
        return {"key": self.key, "spec": self.spec, "verdict": self.verdict.decision if self.verdict else "none",
                "risk": self.verdict.risk if self.verdict else None,
                "reason": self.verdict.reason if self.verdict else None,
                "error": self.error, "ms": round(self.ms, 1), "tokens": self.tokens,
                "cost_usd": self.cost_usd, "cached": self.cached}


def run_command(prog: str, request: dict[str, Any], cwd: str) -> tuple[Verdict | None, str | None]:
    try:
        proc = subprocess.Popen([prog], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=cwd, start_new_session=True)
    except OSError as exc:
        return None, f"it could not start: {exc.strerror or exc}"
    try:
        out, _ = proc.communicate(json.dumps(request).encode(), timeout=settings.review_timeout())
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None, f"it gave no answer within {settings.review_timeout():g}s"
    if proc.returncode != 0:
        return None, f"it exited with {proc.returncode}"
    found = parse_verdict(out.decode(errors="replace"))
    return (found, None) if isinstance(found, Verdict) else (None, found)


class Reviewer:
    """The reviewer of one member, by its spec; `review(request, key)` never raises."""

    def __init__(self, team: Team, spec: str, member: str) -> None:
        self.team = team
        self.spec = spec
        self.member = member
        self._cache: dict[str, Verdict] = {}

    def review(self, request: dict[str, Any], key: str, cwd: str) -> Review:
        known = self._cache.get(key) or self._recorded(key)
        if known is not None:
            return Review(self.spec, known, cached=True, key=key)
        start = time.perf_counter()
        kind, _, rest = self.spec.partition(":")
        usage: Usage | None = None
        if kind == "command":
            verdict, error = run_command(rest, request, cwd)
        else:
            verdict, error, usage = self._ask_model(
                rest if kind == "model" else self._lead_model(), request, cwd)
        done = Review(self.spec, verdict, error, (time.perf_counter() - start) * 1000, key=key,
                      usage=usage)
        if verdict is not None:
            self._cache[key] = verdict
        return done

    def _recorded(self, key: str) -> Verdict | None:
        """A verdict this member's records hold for the same key (another process of the
        member gave it: a CLI teammate's MCP server, a respawned agent)."""
        for record in reversed(decisions.calls(self.team.name, self.member)):
            done = record.get("review")
            if isinstance(done, dict) and done.get("key") == key and \
                    done.get("verdict") in ("allow", "deny"):
                verdict = Verdict(decision=done["verdict"], risk=str(done.get("risk") or
                                                                     "medium"),
                                  reason=str(done.get("reason") or ""))
                self._cache[key] = verdict
                return verdict
        return None

    def _lead_model(self) -> str:
        lead = self.team.config().member(LEAD_NAME)
        return (lead.model if lead is not None else None) or ""

    def _ask_model(self, spec: str, request: dict[str, Any], cwd: str
                   ) -> tuple[Verdict | None, str | None, Usage | None]:
        from swarm.runtime.models import load_model  # a provider's SDK: only when reviewing
        from swarm.runtime.models.base import ModelRequest

        if not spec:
            return None, "the lead has no model to review with", None
        try:
            model = load_model(spec, cwd=cwd)
            reply = model.complete(ModelRequest(
                system=SYSTEM, tools=[], max_tokens=400,
                messages=[{"role": "user", "content": [
                    {"type": "text", "text": json.dumps(request, indent=1)}]}]))
        except Exception as exc:  # an outage, a bad key: no verdict, a person is asked
            return None, f"the model failed: {str(exc).splitlines()[0][:200] if str(exc) else exc}", \
                None
        found = parse_verdict(reply.text(), first_object=True)
        if isinstance(found, Verdict):
            return found, None, reply.usage
        return None, found, reply.usage
