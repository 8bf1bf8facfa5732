"""`swarm doctor`: what this machine offers swarm, and what looks wrong in $SWARM_HOME
(the findings and repairs themselves are in damage.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import Any

from swarm import settings
from swarm.backends.resolve import in_iterm2, resolve
from swarm.core.store import paths
from swarm.core.store import select as stores
from swarm.core.team.team import Team
from swarm.core.text.terminal import visible_line
from swarm.core.trust.secrets import redact
from swarm.core.trust.workspace import decide
from swarm.errors import SwarmError
from swarm.ops.doctor.agent_clis import agent_cli_lines, check_agent_clis
from swarm.ops.doctor.damage import find, repair
from swarm.ops.member.health import observe
from swarm.runtime.models import default_model_spec
from swarm.runtime.models.prices import load_user_prices
from swarm.runtime.models.providers import describe as describe_providers


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


def project_trust() -> dict[str, Any]:
    """Whether the project configuration found from here would be used (core.trust.workspace)."""
    try:
        decision = decide(os.getcwd())
    except OSError:  # the cwd is gone
        return {"root": None, "state": "none", "reason": "no working directory", "files": [],
                "warning": None}
    root = decision.config.root
    return {"root": str(root) if root else None, "state": decision.state,
            "reason": decision.reason, "files": decision.config.names(),
            "warning": decision.warning}


def _prices() -> dict[str, Any]:
    """`$SWARM_HOME/prices.json`: how many prices it adds, or what is wrong with it."""
    prices, problem = load_user_prices()
    return {"path": str(paths.home() / "prices.json"), "models": len(prices), "problem": problem}


def _provider_lines(report: dict[str, Any]) -> list[str]:
    """One line per model provider: ready or what to set (never a credential's value)."""
    lines = []
    for row in report["providers"]:
        state = (f"ready ({row['credentials']})" if row["ready"] else str(row["problem"]))
        lines.append(f"{'ok  ' if row['ready'] else '--  '}provider {row['provider']}: {state};"
                     f" endpoint {row['endpoint']}")
    prices = report["prices"]
    if prices["problem"]:
        lines.append(f"!!  prices: {prices['problem']}")
    elif prices["models"]:
        lines.append(f"ok  prices: {prices['path']} adds {prices['models']} model(s)")
    return lines


def check_store() -> dict[str, Any]:
    """Where teams live (SWARM_STORE), as the store describes itself: reachable or not, and
    what it warns of."""
    try:
        return dict(stores.team_store().describe())
    except SwarmError as exc:  # its client not installed: the URL (it may hold a password) unshown
        return {"kind": "unavailable", "ok": False, "where": "SWARM_STORE", "error": str(exc)}


def _store_lines(report: dict[str, Any]) -> list[str]:
    store = report["store"]
    if not store["ok"]:
        return [f"!!  store: {store['error']}"]
    return [f"ok  store: {store['summary']}", *(f"!!  store: {w}" for w in store["warnings"])]


def diagnose(fix: bool = False) -> dict[str, Any]:
    """What this machine offers swarm, and what is damaged under SWARM_HOME. Changes nothing
    unless `fix`: then it makes the safe repairs and marks each finding it fixed."""
    choice = resolve(None)
    writable, where = _home_writable()
    model, notice = default_model_spec()
    teams: list[dict[str, Any]] = []
    hosts: dict[str, list[str]] = {}  # ssh host -> its members (`team/name`)
    store = check_store()
    for team in Team.list() if store["ok"] else []:
        try:
            statuses = observe(team, record=False)
        except Exception as exc:  # one broken team must not hide the others
            teams.append({"team": team.name, "error": redact(str(exc))})
            continue
        for member in team.members():
            if member.host:
                hosts.setdefault(member.host, []).append(f"{team.name}/{member.name}")
        dead = [s.name for s in statuses if s.state == "dead"]
        running = [s.name for s in statuses if s.state not in ("dead", "exited")]
        teams.append({"team": team.name, "members": len(statuses), "running": running,
                      "dead": dead, "stale": bool(statuses) and not running})
    findings = find(paths.home()) if store["ok"] else []  # after the teams: a corrupt team file is reported there first
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
        "api_key": settings.anthropic_credentials(),
        "default_model": model,
        "model_notice": notice,
        "providers": describe_providers(),
        "prices": _prices(),
        "agent_clis": check_agent_clis(),
        "swarm_home": where,
        "swarm_home_writable": writable,
        "project_trust": project_trust(),
        "store": store,
        "teams": teams,
        "ssh_hosts": [_ssh_host(host, members) for host, members in sorted(hosts.items())],
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
        f"{mark(report['default_model'] != 'shell')}default model: {report['default_model']}"
        + (f" ({report['model_notice']})" if report["model_notice"] else ""),
        *_provider_lines(report),
        *agent_cli_lines(report["agent_clis"]),
        f"{'ok  ' if report['swarm_home_writable'] else '!!  '}SWARM_HOME: {report['swarm_home']}"
        f"{'' if report['swarm_home_writable'] else ' (not writable)'}",
    ]
    lines.append(_trust_line(report["project_trust"]))
    lines += _store_lines(report)
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
    for host in report.get("ssh_hosts", []):
        lines.append(f"ok  ssh {host['host']}: {host['version']}" if host["version"] else
                     f"!!  ssh {host['host']} ({', '.join(host['members'])}): {host['problem']}")
    for finding in report["findings"]:
        sign = "ok  " if finding["fixed"] else "!!  "  # a repaired finding is no problem now
        lines.append(f"{sign}{finding['kind']}: {finding['path']}: {finding['detail']}")
        if finding["fixed"]:
            lines.append(f"    fixed: {finding['fix']}")
        elif finding["fix"]:
            lines.append(f"    `swarm doctor --fix` would: {finding['fix']}")
    if not report["findings"]:
        lines.append("ok  no damage found under SWARM_HOME")
    return "\n".join(lines)


def problems(report: dict[str, Any]) -> list[str]:
    """The problems doctor prints (its `!!` lines): `swarm doctor` fails when there is one."""
    return [line[4:] for line in render(report).splitlines() if line.startswith("!!")]


def _ssh_host(host: str, members: list[str]) -> dict[str, Any]:
    """A teammate host: does `ssh HOST swarm --version` answer, as its teammates start swarm?"""
    from swarm.backends.ssh import remote_version

    try:
        version, problem = visible_line(remote_version(host)) or "?", None
    except SwarmError as exc:
        version, problem = None, visible_line(str(exc))
    return {"host": host, "members": members, "version": version, "problem": problem}


def _trust_line(trust: dict[str, Any]) -> str:
    root = visible_line(trust["root"] or "-")
    if trust["state"] == "none":
        return "ok  project: no project configuration here"
    if trust["state"] == "trusted":
        return f"ok  project {root}: trusted ({trust['reason']})"
    files = visible_line(", ".join(trust["files"]))
    warning = f"; {visible_line(trust['warning'])}" if trust["warning"] else ""
    return (f"!!  project {root}: not trusted ({trust['reason']}): {files} ignored"
            f" (`swarm trust` to review it){warning}")
