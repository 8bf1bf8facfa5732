"""The decision record: one JSON line per tool call a member's permission policy decided (which
tier, who decided, why, the reviewer's verdict and cost, the person's wait), appended by the
process that decided (the member's own, or its MCP server for an agent CLI) to
`agents/<name>/decisions.jsonl`. `swarm permissions log`, `swarm report` and the reviewer's
history read it; so do the auto-mode counters (3 denials in a row or 20 in all since auto was
last turned on: then a person is asked again), one source for every process of a member.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarm.core.store import paths
from swarm.core.store.disk import append_line, utcnow_iso

FILE = "decisions.jsonl"
IN_A_ROW = 3  # reviewer denials in a row that end auto's reviewing for a member
IN_ALL = 20  # reviewer denials in all that do
RESUMED = "auto_resumed"  # a marker line: auto was (re)set, the counts start again


def _path(team: str, name: str) -> Path:
    return paths.agent_dir(team, name) / FILE


def append(team: str, name: str, record: dict[str, Any]) -> None:
    """Add one record (a `ts` is set here)."""
    folder = paths.agent_dir(team, name)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = json.dumps({"ts": utcnow_iso(), **record}, separators=(",", ":")) + "\n"
    append_line(_path(team, name), line.encode())


def resume_auto(team: str, name: str) -> None:
    """Auto was set (again) for `name`: its denial counts start from zero."""
    append(team, name, {"kind": RESUMED})


def records(team: str, name: str) -> Iterator[dict[str, Any]]:
    """Every record of `name`, oldest first (a torn or foreign line is skipped)."""
    try:
        text = _path(team, name).read_text(errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            yield found


def calls(team: str, name: str) -> list[dict[str, Any]]:
    """The decisions of `name` (no markers), oldest first."""
    return [r for r in records(team, name) if r.get("kind") != RESUMED]


def denials(team: str, name: str) -> tuple[int, int]:
    """(reviewer denials in a row, in all) since auto was last set. An allow by the reviewer
    ends a row; no verdict counts as neither."""
    row = total = 0
    for record in records(team, name):
        if record.get("kind") == RESUMED:
            row = total = 0
            continue
        if record.get("tier") != "reviewer" or record.get("who") != "reviewer":
            continue
        if record.get("behavior") == "deny":
            row, total = row + 1, total + 1
        elif record.get("behavior") == "allow":
            row = 0
    return row, total


def paused(team: str, name: str) -> str | None:
    """Why the reviewer no longer decides for `name` (a person is asked), or None."""
    row, total = denials(team, name)
    if row >= IN_A_ROW:
        return f"the reviewer denied {row} calls in a row"
    if total >= IN_ALL:
        return f"the reviewer denied {total} calls in all"
    return None


def summary(team: str, name: str) -> dict[str, Any]:
    """What `swarm report` shows of a member's decisions: calls by tier, the reviewer's verdicts
    and cost, the person's waits, forbidden calls refused, and whether auto is paused."""
    found = calls(team, name)
    if not found:
        return {}
    by_tier: dict[str, int] = {}
    review = {"allow": 0, "deny": 0, "no_verdict": 0, "cached": 0, "tokens": 0,
              "cost_usd": 0.0}
    waits = []
    for record in found:
        tier = str(record.get("tier") or "mode")
        by_tier[tier] = by_tier.get(tier, 0) + 1
        done = record.get("review")
        if isinstance(done, dict):
            verdict = done.get("verdict")
            key = verdict if verdict in ("allow", "deny") else "no_verdict"
            review[key] += 1
            review["cached"] += int(bool(done.get("cached")))
            tokens = done.get("tokens") or {}
            review["tokens"] += int(tokens.get("input", 0)) + int(tokens.get("output", 0))
            review["cost_usd"] += float(done.get("cost_usd") or 0.0)
        asked = record.get("asked")
        if isinstance(asked, dict):
            waits.append(float(asked.get("wait_ms") or 0.0) / 1000)
    return {"by_tier": by_tier, "reviewer": review,
            "asked": {"count": len(waits), "wait_s": round(sum(waits), 3)},
            "forbidden": by_tier.get("forbidden", 0), "paused": paused(team, name) is not None}
