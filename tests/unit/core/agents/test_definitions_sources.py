"""Agent definitions from Claude Code's two other sources, with their precedence (lowest
first): built-in < plugin < user < project < policy.

- policy: `$SWARM_POLICY_DIR/agents/*.md` (or config.toml's `policy_dir`), an organisation's
  managed definitions, above everything; read from the person's environment when a team is
  created and kept in the team's document, so a teammate's own environment cannot change it;
- plugin: `$SWARM_HOME/plugins/PLUGIN/agents/*.md` beside `.claude-plugin/plugin.json`; their
  `hooks`, `mcpServers` and `permissionMode` are ignored (one warning each), as Claude Code
  ignores them for plugin agents.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from swarm.cli.main import cli
from swarm.core.agents.definitions import get_definition, load_definitions
from swarm.core.store import paths
from swarm.core.team.team import Team

pytestmark = pytest.mark.usefixtures("trust_projects")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def plugin(name: str, manifest: bool = True) -> Path:
    root = paths.home() / "plugins" / name
    if manifest:
        write(root / ".claude-plugin" / "plugin.json", json.dumps({"name": name}))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    return tmp_path / "policy"


def test_policy_is_above_project_user_and_builtin(project: Path, policy: Path) -> None:
    write(paths.user_agents_dir() / "explore.md", "---\ndescription: user's\n---\nUser.\n")
    write(project / ".claude/agents/explore.md", "---\ndescription: project's\n---\nProject.\n")
    managed = write(policy / "agents/explore.md", "---\ndescription: managed\n---\nManaged.\n")
    write(policy / "agents/auditor.md", "---\ndescription: audits\ntools: Read\n---\nAudit.\n")
    found = load_definitions(project, policy_dir=str(policy)).definitions
    explore = found["explore"]
    assert (explore.source, explore.path, explore.prompt) == ("policy", str(managed), "Managed.")
    assert [s.source for s in explore.overrides] == ["project", "user", "builtin"]
    assert found["auditor"].source == "policy" and not found["auditor"].overrides
    # Without a policy directory the project's wins, as before.
    assert load_definitions(project).definitions["explore"].source == "project"
    assert get_definition("auditor", project, policy_dir=str(policy)).prompt == "Audit."


def test_plugin_agents_are_above_builtin_below_user(project: Path) -> None:
    tools = plugin("review-kit")
    defined = write(tools / "agents/code-reviewer.md",
                    "---\nname: code-reviewer\ndescription: the plugin's\ntools: Read, Bash\n"
                    "model: haiku\nhooks:\n  Stop:\n    - command: echo hi\n"
                    "mcpServers: [github]\npermissionMode: bypassPermissions\n---\nReview.\n")
    write(tools / "agents/tester.md", "---\ndescription: tests\n---\nTest.\n")
    write(plugin("no-manifest", manifest=False) / "agents/stray.md", "---\n---\nStray.\n")
    loaded = load_definitions(project)
    reviewer = loaded.definitions["code-reviewer"]
    assert (reviewer.source, reviewer.path, reviewer.prompt) == ("plugin", str(defined), "Review.")
    assert (reviewer.tools, reviewer.model) == (["Read", "Bash"], "haiku")  # prompt, tools, model
    assert reviewer.hooks is None and reviewer.mcp_servers == [] and reviewer.permission_mode is None
    assert [w.split(": ", 1)[1] for w in reviewer.warnings] == [
        f"field {key!r}: ignored for a plugin's agent (as Claude Code does)"
        for key in ("hooks", "mcpServers", "permissionMode")]
    assert [s.source for s in reviewer.overrides] == ["builtin"]
    assert loaded.definitions["tester"].source == "plugin"
    assert "stray" not in loaded.definitions
    assert [p.message for p in loaded.problems] == [
        "not a plugin (no .claude-plugin/plugin.json beside agents/); its agents are skipped"]
    # A user's definition of the name is above the plugin's.
    write(paths.user_agents_dir() / "tester.md", "---\n---\nMine.\n")
    tester = load_definitions(project).definitions["tester"]
    assert tester.source == "user" and [s.source for s in tester.overrides] == ["plugin"]


def test_agents_list_names_each_source_and_what_it_overrides(
        project: Path, policy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(plugin("kit") / "agents/plan.md", "---\n---\nPlugin plan.\n")
    write(policy / "agents/plan.md", "---\n---\nManaged plan.\n")
    write(plugin("kit") / "agents/linter.md", "---\n---\nLint.\n")
    monkeypatch.setenv("SWARM_POLICY_DIR", str(policy))
    runner = CliRunner()
    listed = runner.invoke(cli, ["agents", "list", "--cwd", str(project), "--json"])
    assert listed.exit_code == 0, listed.output
    by_name = {d["name"]: d for d in json.loads(listed.stdout)}
    assert by_name["plan"]["source"] == "policy"
    assert [s["source"] for s in by_name["plan"]["overrides"]] == ["plugin", "builtin"]
    assert by_name["linter"]["source"] == "plugin"
    human = runner.invoke(cli, ["agents", "list", "--cwd", str(project)])
    assert "policy (overrides plugin, builtin)" in human.stdout
    assert f"plan: {policy / 'agents/plan.md'} overrides plugin" in human.stdout
    shown = runner.invoke(cli, ["agents", "show", "plan", "--cwd", str(project)])
    assert "source:           policy" in shown.stdout and "Managed plan." in shown.stdout


def test_a_team_keeps_the_policy_directory_it_started_with(
        tmp_path: Path, policy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_POLICY_DIR", str(policy))
    team = Team.create("managed")
    assert team.config().policy_dir == str(policy)
    monkeypatch.setenv("SWARM_POLICY_DIR", str(tmp_path / "elsewhere"))
    assert Team.open("managed").config().policy_dir == str(policy)  # not the caller's now
    monkeypatch.delenv("SWARM_POLICY_DIR")
    home = paths.home()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'policy_dir = "{tmp_path / "from-config"}"\n')
    assert Team.create("configured").config().policy_dir == str(tmp_path / "from-config")
    (home / "config.toml").unlink()
    assert Team.create("unmanaged").config().policy_dir is None


