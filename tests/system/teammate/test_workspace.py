"""Workspace trust (docs/design/trust.md): a cloned repository's hooks, MCP servers and agent
definitions run only once the project is trusted, and trust is bound to a digest of those files.

The tests of tests/unit/core/trust/test_workspace.py that start processes."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.trust.workspace import decide, find_project_config
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.git_helpers import commit_all, git
from tests.support.helpers import wait_until
from tests.unit.core.trust.test_workspace import (
    NAMES,
    Project,
    assert_ignored_line,
    lead_turns,
    mode,
    run_lead,
    spawn,
)


@pytest.fixture
def project(tmp_path: Path, crew: Crew) -> Project:
    crew.workdir.rmdir()  # the clone goes there: the crew's teammates work in it
    return Project(tmp_path, crew.workdir)


def test_an_untrusted_clone_runs_nothing_then_trust_applies_it_until_a_pulled_change(
        project: Project, crew: Crew) -> None:
    # Untrusted: no hook, no server, the built-in definition (default mode); one stderr line.
    proc = spawn(project, "w1", "--allow", "Bash(echo:*)")
    assert_ignored_line(proc, project)
    crew.wait_idle_notes("w1", 1, timeout=60)
    assert "hello" in crew.log("w1")
    assert project.hook_agents() == [] and not project.server_ran.exists()
    assert mode(crew, "w1") == "default"

    # `swarm trust --yes` shows what would run and records it.
    shown = run_swarm("trust", "--yes", cwd=project.clone)
    assert shown.returncode == 0, shown.stderr
    assert f"cat >> {project.hook_log}" in shown.stdout
    assert "probe" in shown.stdout and str(project.server_ran) in shown.stdout
    assert "general-purpose" in shown.stdout and "bypassPermissions" in shown.stdout
    proc = spawn(project, "w2")
    assert error_lines(proc) == []
    crew.wait_idle_notes("w2", 1, timeout=60)
    assert project.hook_agents() == [f"w2@{crew.team.name}"]
    assert project.server_ran.exists()
    assert mode(crew, "w2") == "bypassPermissions"
    listed = json.loads(run_swarm("trust", "--list", "--json").stdout)
    assert [(r["root"], r["state"]) for r in listed] == [(str(project.clone), "trusted")]

    # A pulled commit that changes the hook: untrusted again until trusted again.
    changed = project.base / "changed-hook-ran.jsonl"
    project.pull_a_changed_hook(changed)
    proc = spawn(project, "w3", "--allow", "Bash(echo:*)")
    assert_ignored_line(proc, project)
    crew.wait_idle_notes("w3", 1, timeout=60)
    assert project.hook_agents(changed) == []
    assert mode(crew, "w3") == "default"
    listed = json.loads(run_swarm("trust", "--list", "--json").stdout)
    assert [r["state"] for r in listed] == ["changed"]



def test_trust_project_and_the_env_variable_trust_one_run_without_recording(
        project: Project, crew: Crew) -> None:
    proc = spawn(project, "flagged", "--trust-project")
    assert error_lines(proc) == []
    proc = spawn(project, "envd", env={"SWARM_TRUST_PROJECT": "1"})
    assert error_lines(proc) == []
    crew.wait_idle_notes("flagged", 1, timeout=60)
    crew.wait_idle_notes("envd", 1, timeout=60)
    assert project.hook_agents() == [f"envd@{crew.team.name}", f"flagged@{crew.team.name}"]
    assert mode(crew, "flagged") == mode(crew, "envd") == "bypassPermissions"
    assert not paths.trust_file().exists()
    proc = spawn(project, "plain", "--allow", "Bash(echo:*)")  # the next run is untrusted
    assert_ignored_line(proc, project)
    assert mode(crew, "plain") == "default"



def test_revoke_and_a_corrupt_trust_file(project: Project, crew: Crew) -> None:
    assert run_swarm("trust", "--yes", cwd=project.clone).returncode == 0
    revoked = run_swarm("trust", "--revoke", str(project.clone))
    assert revoked.returncode == 0, revoked.stderr
    assert json.loads(run_swarm("trust", "--list", "--json").stdout) == []
    assert_ignored_line(spawn(project, "after-revoke", "--allow", "Bash(echo:*)"), project)
    assert mode(crew, "after-revoke") == "default"

    # A corrupt trust.json: untrusted with a clear warning, never a crash.
    paths.trust_file().write_text('{"version": 1, "projects": {')
    proc = spawn(project, "corrupt", "--allow", "Bash(echo:*)")
    warnings = [line for line in error_lines(proc) if "trust.json" in line]
    assert len(warnings) == 1 and "untrusted" in warnings[0], proc.stderr
    assert_ignored_line(proc, project)
    assert mode(crew, "corrupt") == "default"
    listed = run_swarm("trust", "--list")
    assert listed.returncode == 0 and "trust.json" in listed.stderr
    # Trusting again replaces it (the corrupt one is moved aside, not lost).
    again = run_swarm("trust", "--yes", cwd=project.clone)
    assert again.returncode == 0, again.stderr
    assert list(paths.home().glob("trust.json.corrupt-*"))
    assert error_lines(spawn(project, "trusted-again")) == []
    assert mode(crew, "trusted-again") == "bypassPermissions"



def test_the_teammate_process_decides_for_itself(project: Project, crew: Crew) -> None:
    """A member registered by any other path than spawn: its own process ignores an untrusted
    project; a grant in its member entry counts only for the digest it names."""
    crew.register("direct", cwd=str(project.clone), permission_mode="default",
                  allow_rules=["Bash(echo:*)"])
    crew.send("direct", "$ echo direct")
    crew.launch("direct")
    crew.wait_idle_notes("direct", 1, timeout=60)
    assert project.hook_agents() == []
    assert "swarm trust" in crew.log("direct")

    config = find_project_config(project.clone)
    crew.register("stale", cwd=str(project.clone), allow_rules=["Bash(echo:*)"],
                  trusted_config="0" * 64)
    crew.register("granted", cwd=str(project.clone), allow_rules=["Bash(echo:*)"],
                  trusted_config=config.digest())
    for name in ("stale", "granted"):
        crew.send(name, f"$ echo {name}")
        crew.launch(name)
    crew.wait_idle_notes("stale", 1, timeout=60)
    crew.wait_idle_notes("granted", 1, timeout=60)
    assert project.hook_agents() == [f"granted@{crew.team.name}"]



def test_a_worktree_falls_back_to_uncommitted_config_only_when_trusted(
        project: Project, crew: Crew) -> None:
    hook_log = project.base / "uncommitted-hook.jsonl"
    settings = project.clone / ".swarm" / "settings.json"
    git(project.clone, "rm", "-q", str(settings))
    commit_all(project.clone, "no committed hooks")
    # Uncommitted project configuration: the worktree does not have it, its checkout does.
    settings.write_text(Project.hooks(hook_log))
    assert_ignored_line(spawn(project, "wt1", "--worktree", "--allow", "Bash(echo:*)"), project)
    crew.wait_idle_notes("wt1", 1, timeout=60)
    assert project.hook_agents(hook_log) == []
    assert run_swarm("trust", "--yes", cwd=project.clone).returncode == 0
    assert error_lines(spawn(project, "wt2", "--worktree")) == []
    crew.wait_idle_notes("wt2", 1, timeout=60)
    assert project.hook_agents(hook_log) == [f"wt2@{crew.team.name}"]



@pytest.mark.usefixtures("lead_env")
def test_an_untrusted_lead_ignores_the_project_and_a_trusted_one_uses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    clone = tmp_path / "clone"
    project = Project(tmp_path, clone)
    # (a prompt without commands: a default-mode teammate would ask to run one, and nobody
    # answers a headless lead's teammates here)
    untrusted = run_lead(project, "plain", lead_turns("Say hello."))
    assert untrusted.returncode == 0, untrusted.stderr
    lines = [line for line in untrusted.stderr.splitlines() if "swarm trust" in line]
    assert len(lines) == 1 and all(name in lines[0] for name in NAMES), untrusted.stderr
    assert project.hook_agents() == [] and not project.server_ran.exists()
    assert Team.open("plain").member("w").permission_mode == "default"

    # (its definition's bypassPermissions is granted only by a lead that has it: the mode cap)
    trusted = run_lead(project, "flagged", lead_turns("$ echo hi"), "--trust-project",
                       "--permission-mode", "bypassPermissions")
    assert trusted.returncode == 0, trusted.stderr
    assert "swarm trust" not in trusted.stderr
    assert project.hook_agents() == ["team-lead@flagged", "w@flagged"]
    assert project.server_ran.exists()
    assert Team.open("flagged").member("w").permission_mode == "bypassPermissions"
    assert not paths.trust_file().exists()



def test_the_interactive_lead_asks_once_after_showing_the_summary(
        session: Any, tmp_path: Path, swarm_home: Path) -> None:
    project = Project(tmp_path, tmp_path / "clone")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([{"text": "Hello."}]))
    env = {"SWARM_HOME": str(swarm_home), "HOME": str(tmp_path), "PATH": os.environ["PATH"],
           "TERM": "xterm-256color", "SWARM_SHUTDOWN_GRACE": "5"}
    lead = shlex.join([SWARM, "lead", "--model", f"scripted:{script}", "--teammate-model",
                       "shell", "--backend", "hidden", "--team", "asked",
                       "--cwd", str(project.clone)])
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    exit_file = tmp_path / "exit-code"
    window = session.new_window(
        window_name="lead",
        window_shell=f"env -i {exports} {lead}; echo $? > {shlex.quote(str(exit_file))}; sleep 60")
    pane = window.active_pane
    assert pane is not None

    def screen() -> str:
        return "\n".join(pane.cmd("capture-pane", "-p", "-J", "-S", "-").stdout)

    wait_until(lambda: "[y/N]" in screen(), 60, message=f"the trust question:\n{screen()}")
    text = screen()
    assert f"cat >> {project.hook_log}" in text and "bypassPermissions" in text
    assert not paths.trust_file().exists()
    pane.send_keys("y", enter=True)
    wait_until(lambda: "swarm lead: team asked" in (text := screen()) and "\n>" in text, 60,
               message=screen())
    pane.send_keys("C-d", enter=False)
    # The shell creates the file, then writes the code into it: wait for the code.
    wait_until(lambda: exit_file.exists() and exit_file.read_text().strip(), 40,
               message=f"the lead to exit:\n{screen()}")
    assert exit_file.read_text().strip() == "0", screen()
    assert decide(project.clone).trusted  # recorded: the next session does not ask
