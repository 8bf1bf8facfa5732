"""Workspace trust (docs/design/trust.md): a cloned repository's hooks, MCP servers and agent
definitions run only once the project is trusted, and trust is bound to a digest of those files.

The end-to-end tests drive a real git clone through `swarm spawn` (real `swarm agent` processes
on the hidden backend, `shell` model) and `swarm lead --headless` (a `scripted:` lead): the
project's hook appends its JSON payload to a marker file, its MCP server's command touches a
marker before it execs a real stdio server, and its `general-purpose` definition asks for
bypassPermissions and that server.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.core.agents.definitions import load_definitions
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.trust.mcp_config import load_mcp_config
from swarm.core.trust.workspace import decide, find_project_config, read_store, record
from swarm.runtime.extensions.user_hooks import load_hooks
from tests.support.agent_fixtures import SWARM, Crew, error_lines, run_swarm
from tests.support.git_helpers import commit_all, git, init_repo
from tests.support.helpers import wait_until
from tests.support.mcp_fixtures import write_server

DEFINITION = ("---\npermission_mode: bypassPermissions\nmcp_servers: [probe]\n---\n"
              "The project's own general-purpose agent.\n")
NAMES = (".mcp.json", ".swarm/agents/general-purpose.md", ".swarm/settings.json")


class Project:
    """An origin repository with project configuration, and a clone of it (the teammates' cwd)."""

    def __init__(self, base: Path, clone: Path) -> None:
        self.base = base
        self.hook_log = base / "hook-ran.jsonl"  # each PreToolUse payload, one per line
        self.server_ran = base / "server-ran"
        server = write_server(base)
        self.files = {
            ".swarm/settings.json": self.hooks(self.hook_log),
            ".mcp.json": json.dumps({"mcpServers": {"probe": {"command": "sh", "args": [
                "-c", f"touch {self.server_ran}; exec {sys.executable} {server}"]}}}),
            ".swarm/agents/general-purpose.md": DEFINITION,
            "README.md": "a project\n",
        }
        self.origin = init_repo(base / "origin", self.files)
        self.clone = clone
        subprocess.run(["git", "clone", "-q", str(self.origin), str(clone)], check=True)

    @staticmethod
    def hooks(log: Path) -> str:
        return json.dumps({"hooks": {"PreToolUse": [{"command": f"cat >> {log}; echo >> {log}"}]}})

    def hook_agents(self, log: Path | None = None) -> list[str]:
        """The agent ids whose PreToolUse hook ran (from the payloads the hook wrote), sorted.
        Read as a stream of JSON objects, not lines: two agents' hooks may append at once, and
        each payload is one append but its newline another (`cat >> log; echo >> log`)."""
        try:
            text = (log or self.hook_log).read_text()
        except FileNotFoundError:
            return []
        decoder, agents = json.JSONDecoder(), set()
        text = text.strip()
        at = 0
        while at < len(text):
            payload, at = decoder.raw_decode(text, at)
            agents.add(payload["agent_id"])
            while at < len(text) and text[at].isspace():
                at += 1
        return sorted(agents)

    def pull_a_changed_hook(self, log: Path) -> None:
        (self.origin / ".swarm" / "settings.json").write_text(self.hooks(log))
        commit_all(self.origin, "change the hook")
        git(self.clone, "pull", "-q")


@pytest.fixture
def project(tmp_path: Path, crew: Crew) -> Project:
    crew.workdir.rmdir()  # the clone goes there: the crew's teammates work in it
    return Project(tmp_path, crew.workdir)


def spawn(project: Project, name: str, *extra: str,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = run_swarm("spawn", name, "--model", "shell", "--backend", "hidden",
                     "--prompt", "$ echo hello", *extra, cwd=project.clone, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def mode(crew: Crew, name: str) -> str:
    return crew.team.member(name).permission_mode


def assert_ignored_line(proc: subprocess.CompletedProcess[str], project: Project) -> None:
    (line,) = [line for line in error_lines(proc) if "trust.json" not in line]
    assert line.startswith("swarm: warning: ")
    assert all(name in line for name in NAMES), line
    assert "swarm trust" in line and str(project.clone) in line


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


# -- the lead ------------------------------------------------------------------------------------
def run_lead(project: Project, team: str, turns: list[dict[str, Any]], *extra: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = project.base / f"{team}.json"
    script.write_text(json.dumps(turns))
    argv = [SWARM, "lead", "--headless", "--model", f"scripted:{script}", "--teammate-model",
            "shell", "--backend", "hidden", "--team", team, "--keep", *extra, "go"]
    return subprocess.run(argv, capture_output=True, text=True, cwd=project.clone, timeout=120,
                          env={**os.environ, **(env or {})})


def lead_turns(prompt: str) -> list[dict[str, Any]]:
    return [{"tool_uses": [{"name": "TaskList", "input": {}},
                           {"name": "SpawnTeammate", "input": {"name": "w", "prompt": prompt}}]},
            {"text": "Started."}]


@pytest.mark.slow
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


# -- the parts, without processes ----------------------------------------------------------------
def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def test_the_digest_changes_with_a_new_a_changed_and_a_removed_file(repo: Path) -> None:
    assert find_project_config(repo).files == ()
    write(repo / ".mcp.json", '{"mcpServers": {}}')
    first = find_project_config(repo / "src")
    assert (first.root, [f.relative for f in first.files]) == (repo, [".mcp.json"])
    digests = {first.digest()}
    for step in (lambda: write(repo / ".claude/agents/x.md", "hi"),       # new (counted too)
                 lambda: write(repo / ".claude/settings.json", "{}"),
                 lambda: write(repo / ".swarm/agents/y.md", "hi"),
                 lambda: write(repo / ".swarm/agents/y.md", "changed"),  # changed
                 lambda: (repo / ".claude/agents/x.md").unlink()):       # removed
        step()
        digests.add(find_project_config(repo).digest())
    assert len(digests) == 6
    # Renaming a file (same content) changes it too: the path is part of the digest.
    (repo / ".swarm/agents/y.md").rename(repo / ".swarm/agents/z.md")
    assert find_project_config(repo).digest() not in digests


def test_user_configuration_is_never_project_configuration(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SWARM_HOME", str(home / ".swarm"))
    (home / ".git").mkdir(parents=True)  # a dotfiles repository at $HOME
    write(home / ".claude/agents/mine.md", "mine")
    write(home / ".swarm/settings.json", "{}")
    write(home / ".swarm/agents/mine.md", "mine")
    assert find_project_config(home / "code").files == ()
    decision = decide(home)
    assert decision.trusted and decision.notice() is None


def test_the_loaders_use_a_projects_files_only_when_it_is_trusted(repo: Path) -> None:
    write(repo / ".swarm/settings.json", '{"hooks": {"SessionEnd": [{"command": "x"}]}}')
    write(repo / ".mcp.json", '{"mcpServers": {"p": {"command": "x"}}}')
    write(repo / ".swarm/agents/tester.md", "Test.\n")
    assert load_hooks(repo / "src") == ([], [])
    assert load_mcp_config(repo).servers == {}
    assert "tester" not in load_definitions(repo).definitions
    listed = run_swarm("agents", "list", cwd=repo)
    assert listed.returncode == 0 and "tester" not in listed.stdout
    assert [line for line in error_lines(listed) if "swarm trust" in line]
    record(find_project_config(repo))
    assert [h.command for h in load_hooks(repo / "src")[0]] == ["x"]
    assert list(load_mcp_config(repo).servers) == ["p"]
    assert load_definitions(repo).definitions["tester"].source == "project"
    listed = run_swarm("agents", "list", cwd=repo)
    assert "tester" in listed.stdout and error_lines(listed) == []


def test_a_recorded_trust_holds_for_that_digest_only(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo / ".swarm/settings.json", '{"hooks": {}}')
    assert not decide(repo).trusted
    record(find_project_config(repo))
    assert decide(repo / "src").trusted
    store, problem = read_store()
    assert problem is None and list(store.projects) == [str(repo)]
    write(repo / ".swarm/settings.json", '{"hooks": {"SessionEnd": []}}')
    changed = decide(repo)
    assert not changed.trusted and "changed" in (changed.notice() or "")
    assert decide(repo, flag=True).trusted
    monkeypatch.setenv("SWARM_TRUST_PROJECT", "1")
    assert decide(repo).trusted


def test_a_corrupt_or_foreign_trust_file_is_untrusted_with_a_warning(repo: Path) -> None:
    write(repo / ".mcp.json", "{}")
    record(find_project_config(repo))
    for text in ("not json", '{"version": 99, "projects": {}}', '[1, 2]'):
        paths.trust_file().write_text(text)
        decision = decide(repo)
        assert not decision.trusted
        assert decision.warning is not None and str(paths.trust_file()) in decision.warning


def test_swarm_trust_shows_control_characters_escaped(repo: Path) -> None:
    write(repo / ".swarm/settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"command": "echo \x1b]52;c;ZXZpbA==\x07 \x1b[2J"}]}}))
    write(repo / ".swarm/agents/evil\x1b[31m.md", "---\ntools: Bash\n---\nx\n")
    proc = run_swarm("trust", "--yes", str(repo))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b]52;c;ZXZpbA==\\x07" in proc.stdout and "evil\\x1b[31m.md" in proc.stdout


def test_swarm_trust_refuses_bad_input_and_says_when_there_is_nothing_to_trust(
        repo: Path, tmp_path: Path) -> None:
    proc = run_swarm("trust", str(tmp_path / "missing"), "--yes")
    assert proc.returncode == 2 and len(error_lines(proc)) == 1
    nothing = run_swarm("trust", "--yes", str(repo))
    assert nothing.returncode == 0 and "no project configuration" in nothing.stdout
    assert not paths.trust_file().exists()
    write(repo / ".mcp.json", "{}")
    no_terminal = subprocess.run([SWARM, "trust", str(repo)], capture_output=True, text=True,
                                 stdin=subprocess.DEVNULL, timeout=30)
    assert no_terminal.returncode == 2 and "--yes" in no_terminal.stderr
    assert not paths.trust_file().exists()
    record(find_project_config(repo))
    again = subprocess.run([SWARM, "trust", str(repo)], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=30)
    assert again.returncode == 0 and "already trusted" in again.stdout


def test_doctor_shows_the_trust_state(repo: Path) -> None:
    def state() -> dict[str, Any]:
        proc = run_swarm("doctor", "--json", cwd=repo)
        return json.loads(proc.stdout)["project_trust"]  # type: ignore[no-any-return]

    assert state()["state"] == "none"
    write(repo / ".mcp.json", "{}")
    untrusted = state()
    assert (untrusted["state"], untrusted["files"]) == ("untrusted", [".mcp.json"])
    assert "not trusted" in run_swarm("doctor", cwd=repo).stdout
    record(find_project_config(repo))
    assert state()["state"] == "trusted"



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
