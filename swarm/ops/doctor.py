"""`swarm doctor`: what this machine offers swarm, and what looks wrong in $SWARM_HOME
(the findings and repairs themselves are in damage.py)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from typing import Any

from swarm import settings
from swarm.backends.resolve import in_iterm2, resolve
from swarm.core import paths
from swarm.core.team import Team
from swarm.ops.damage import find, repair
from swarm.ops.health import observe
from swarm.runtime.models import default_model_spec


def _tmux_version() -> str | None:
    if not shutil.which("tmux"):
        return None
    try:
        out = subprocess.run(["tmux", "-V"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _home_writable() -> tuple[bool, str]:
    root = paths.home()
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".doctor-"):
            pass
        return True, str(root)
    except OSError as exc:
        return False, f"{root}: {exc.strerror}"


def diagnose(fix: bool = False) -> dict[str, Any]:
    """What this machine offers swarm, and what is damaged under SWARM_HOME. Changes nothing
    unless `fix`: then it makes the safe repairs and marks each finding it fixed."""
    choice = resolve(None)
    writable, where = _home_writable()
    model, notice = default_model_spec()
    teams: list[dict[str, Any]] = []
    for team in Team.list():
        try:
            statuses = observe(team, record=False)
        except Exception as exc:  # one broken team must not hide the others
            teams.append({"team": team.name, "error": str(exc)})
            continue
        dead = [s.name for s in statuses if s.state == "dead"]
        running = [s.name for s in statuses if s.state not in ("dead", "exited")]
        teams.append({"team": team.name, "members": len(statuses), "running": running,
                      "dead": dead, "stale": bool(statuses) and not running})
    findings = find(paths.home())  # after the teams: a corrupt team file is reported there first
    if fix:
        for finding in findings:
            repair(finding)
    return {
        "tmux": _tmux_version(),
        "inside_tmux": bool(settings.tmux_env()),
        "iterm2": in_iterm2(),
        "osascript": shutil.which("osascript") is not None,
        "backend": choice.backend,
        "backend_reason": choice.reason,
        "api_key": bool(settings.api_key()),
        "default_model": model,
        "model_notice": notice,
        "swarm_home": where,
        "swarm_home_writable": writable,
        "teams": teams,
        "findings": [f.as_dict() for f in findings],
    }


def render(report: dict[str, Any]) -> str:
    def mark(ok: bool) -> str:
        return "ok  " if ok else "--  "

    lines = [
        f"{mark(bool(report['tmux']))}tmux: {report['tmux'] or 'not installed (teammates run hidden)'}",
        f"{mark(True)}inside tmux: {'yes' if report['inside_tmux'] else 'no'}",
        f"{mark(True)}iTerm2: {'yes' if report['iterm2'] else 'no'}"
        f" (osascript {'found' if report['osascript'] else 'not found'})",
        f"{mark(True)}backend: {report['backend']} ({report['backend_reason']})",
        f"{mark(report['api_key'])}ANTHROPIC_API_KEY: {'set' if report['api_key'] else 'not set'}"
        f" (default model: {report['default_model']})",
        f"{mark(report['swarm_home_writable'])}SWARM_HOME: {report['swarm_home']}"
        f"{'' if report['swarm_home_writable'] else ' (not writable)'}",
    ]
    for team in report["teams"]:
        if "error" in team:
            lines.append(f"!!  team {team['team']}: {team['error']}")
        elif team["dead"]:
            lines.append(f"!!  team {team['team']}: dead members {', '.join(team['dead'])}"
                         f" (`swarm respawn NAME` or `swarm team delete {team['team']}`)")
        elif team["stale"]:
            lines.append(f"..  team {team['team']}: no running members"
                         f" (`swarm team delete {team['team']}` to clean up)")
        else:
            lines.append(f"ok  team {team['team']}: {len(team['running'])} running")
    for finding in report["findings"]:
        lines.append(f"!!  {finding['kind']}: {finding['path']}: {finding['detail']}")
        if finding["fixed"]:
            lines.append(f"    fixed: {finding['fix']}")
        elif finding["fix"]:
            lines.append(f"    `swarm doctor --fix` would: {finding['fix']}")
    if not report["findings"]:
        lines.append("ok  no damage found under SWARM_HOME")
    return "\n".join(lines)
