"""Agent definitions: sources and priority, project discovery, tool narrowing, broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from swarm.cli.main import cli
from swarm.core.agents.definitions import (
    _load_builtins,
    effective_tools,
    get_definition,
    load_definitions,
)
from swarm.core.records.names import KNOWN_TOOLS, TEAM_TOOLS
from swarm.core.store import paths
from swarm.core.trust.workspace import find_project_config
from swarm.errors import NotFoundError
from tests.support.helpers import BREAKOUT

REPO = Path(__file__).resolve().parents[4]

# These tests are about what project configuration does: the project is trusted.
pytestmark = pytest.mark.usefixtures("trust_projects")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project root (a `.git` directory marks it) with a nested working directory."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    return root


def test_builtins_load_cleanly_with_read_only_explore_and_plan(tmp_path: Path) -> None:
    loaded = load_definitions(tmp_path)
    assert loaded.problems == []
    assert loaded.names() == ["code-reviewer", "explore", "general-purpose", "plan"]
    general = loaded.definitions["general-purpose"]
    assert general.tools is None and general.source == "builtin" and general.prompt
    for name in ("explore", "plan"):
        definition = loaded.definitions[name]
        assert definition.tools == ["Read", "Glob", "Grep"]
        assert "read-only" in definition.prompt
        assert definition.path == f"<builtin>/{name}"
    assert "Write" not in effective_tools(loaded.definitions["plan"], list(KNOWN_TOOLS), TEAM_TOOLS)


def test_priority_builtin_then_user_then_project(project: Path) -> None:
    user_dir = paths.user_agents_dir()
    write(user_dir / "explore.md", "---\ndescription: user explore\nmodel: haiku\n---\nUser body.\n")
    write(user_dir / "reviewer.md", "---\ndescription: user reviewer\n---\nReview.\n")
    proj_file = write(project / ".swarm/agents/explore.md",
                      "---\ndescription: project explore\ntools: Read, Grep\n---\nProject body.\n")

    loaded = load_definitions(project)
    assert loaded.problems == []
    explore = loaded.definitions["explore"]
    assert (explore.source, explore.description, explore.prompt) == (
        "project", "project explore", "Project body.")
    assert explore.path == str(proj_file)
    assert explore.tools == ["Read", "Grep"]
    assert explore.model is None  # an override replaces the whole definition, no field merging
    assert [s.source for s in explore.overrides] == ["user", "builtin"]
    assert explore.overrides[0].path == str(user_dir / "explore.md")

    reviewer = loaded.definitions["reviewer"]
    assert reviewer.source == "user" and reviewer.overrides == []
    assert loaded.definitions["plan"].source == "builtin"

    # Without the project file the user one wins over the built-in.
    (proj_file).unlink()
    explore = load_definitions(project).definitions["explore"]
    assert (explore.source, explore.model, explore.prompt) == ("user", "haiku", "User body.")
    assert [s.source for s in explore.overrides] == ["builtin"]


def test_project_dir_found_from_nested_cwd_but_not_above_git_root(tmp_path: Path,
                                                                  project: Path) -> None:
    write(project / ".swarm/agents/tester.md", "Run the tests.\n")
    nested = project / "src" / "deep"
    assert [f.path for f in find_project_config(nested).of("agents")] == [
        project / ".swarm" / "agents" / "tester.md"]
    assert get_definition("tester", nested).source == "project"

    # The nearest directory wins over one further up.
    write(project / "src/.swarm/agents/tester.md", "---\ndescription: nearer\n---\nNearer.\n")
    assert get_definition("tester", nested).description == "nearer"

    # A `.swarm/agents` above the git root belongs to another project: never used.
    write(tmp_path / ".swarm/agents/outsider.md", "Outside.\n")
    inner = tmp_path / "proj2"
    (inner / ".git").mkdir(parents=True)
    (inner / "a").mkdir()
    assert find_project_config(inner / "a").of("agents") == []
    assert "outsider" not in load_definitions(inner / "a").definitions
    # A `.git` file (a worktree) also marks the root.
    wt = tmp_path / "wt"
    (wt / "a").mkdir(parents=True)
    (wt / ".git").write_text("gitdir: /elsewhere\n")
    assert find_project_config(wt / "a").of("agents") == []


def test_defaults_and_fields_parse(project: Path) -> None:
    write(project / ".swarm/agents/Builder.md",
          "---\ndisallowedTools: [Bash]\nmax_turns: 7\npermission-mode: acceptEdits\n"
          "color: cyan\nisolation: worktree\nmodel: claude-x\n---\n\nBuild things.\n")
    definition = get_definition("BUILDER", project)
    assert definition.name == "builder"  # defaults to the (lower-cased) file stem
    assert definition.disallowed_tools == ["Bash"]
    assert definition.isolation == "worktree"
    assert definition.prompt == "Build things."
    assert definition.defaults() == {"model": "claude-x", "max_turns": 7,
                                     "permission_mode": "acceptEdits", "color": "cyan"}


def test_effective_tools_narrowing_keeps_team_tools(project: Path) -> None:
    write(project / ".swarm/agents/reader.md", "---\ntools: [Read, Grep]\n---\nRead.\n")
    write(project / ".swarm/agents/nobash.md", "---\ndisallowed_tools: Bash, Write\n---\nx\n")
    write(project / ".swarm/agents/both.md",
          "---\ntools: [Read, Bash, Edit]\ndisallowed_tools: [Bash]\n---\nx\n")
    loaded = load_definitions(project)
    assert loaded.problems == []
    all_tools = list(KNOWN_TOOLS)
    team = list(TEAM_TOOLS)
    reader = effective_tools(loaded.definitions["reader"], all_tools, team)
    assert sorted(reader) == sorted(["Read", "Grep", *TEAM_TOOLS])
    nobash = effective_tools(loaded.definitions["nobash"], all_tools, team)
    assert set(all_tools) - set(nobash) == {"Bash", "Write"}
    assert effective_tools(loaded.definitions["both"], all_tools, team) == [
        "Read", "Edit", *TEAM_TOOLS]
    # No restriction: everything, in the caller's order.
    assert effective_tools(loaded.definitions["general-purpose"], all_tools, team) == all_tools
    # Team tools are kept even when the caller's full list lacks them.
    assert effective_tools(loaded.definitions["reader"], ["Read", "Write"], ["SendMessage"]) == [
        "Read", "SendMessage"]


def test_a_definition_caps_spend(project: Path) -> None:
    write(project / ".swarm/agents/thrifty.md",
          "---\nmaxBudgetUsd: 0.25\nmax-tokens: 40000\n---\nSpend little.\n")
    definition = get_definition("thrifty", project)
    assert (definition.max_budget_usd, definition.max_tokens) == (0.25, 40000)
    assert definition.defaults() == {"max_budget_usd": 0.25, "max_tokens": 40000}


@pytest.mark.parametrize(
    ("text", "field", "fragment"),
    [
        ("---\nname: [unclosed\n---\nbody\n", None, "not valid YAML"),
        ("---\n- a\n- b\n---\nbody\n", None, "YAML mapping"),
        ("---\npermission_mode: yolo\n---\nbody\n", "permission_mode",
         "must be one of default, acceptEdits, plan, auto, bypassPermissions"),
        ("---\nmax_turns: -3\n---\nbody\n", "max_turns", "greater than or equal to 1"),
        ("---\nmax_turns: many\n---\nbody\n", "max_turns", "integer"),
        ("---\nmax_budget_usd: 0\n---\nbody\n", "max_budget_usd", "greater than 0"),
        ("---\nmax_tokens: 0\n---\nbody\n", "max_tokens", "greater than or equal to 1"),
        ("---\ntools: {a: 1}\n---\nbody\n", "tools", "list of tool names"),
        ("---\ndisallowed_tools: [SendMessage]\n---\nbody\n", "disallowed_tools",
         "cannot be disallowed"),
        ("---\nisolation: container\n---\nbody\n", "isolation", "must be one of worktree"),
        ("---\nname: Bad Name\n---\nbody\n", "name", "invalid agent type"),
        ("---\ndisallowed_tools: [Bsh]\n---\nbody\n", "disallowed_tools", "unknown tool 'Bsh'"),
        ("---\ncolor: 5\n---\nbody\n", "color", "non-empty string"),
    ],
)
def test_broken_definition_reported_with_file_and_field_others_load(
        project: Path, text: str, field: str | None, fragment: str) -> None:
    bad = write(project / ".swarm/agents/bad.md", text)
    write(project / ".swarm/agents/good.md", "---\ndescription: fine\n---\nGood.\n")
    loaded = load_definitions(project)
    assert "good" in loaded.definitions and "explore" in loaded.definitions
    assert "bad" not in loaded.definitions
    assert len(loaded.problems) == 1
    problem = loaded.problems[0]
    assert problem.path == str(bad) and problem.field == field
    assert fragment in str(problem)
    assert str(problem).startswith(f"{bad}: " + (f"field {field!r}: " if field else ""))
    # Asking for the broken one explains why it is missing.
    with pytest.raises(NotFoundError) as info:
        get_definition("bad", project)
    assert "available: code-reviewer, explore, general-purpose, good, plan" in str(info.value)
    assert str(bad) in str(info.value)


def test_broken_project_override_leaves_lower_priority_in_place(project: Path) -> None:
    write(project / ".swarm/agents/explore.md", "---\nmax_turns: 0\n---\nbroken\n")
    loaded = load_definitions(project)
    assert loaded.definitions["explore"].source == "builtin"
    assert [p.field for p in loaded.problems] == ["max_turns"]


def test_duplicate_name_in_one_directory_is_a_problem(project: Path) -> None:
    write(project / ".swarm/agents/a.md", "---\nname: helper\n---\nA.\n")
    write(project / ".swarm/agents/helper.md", "H.\n")
    loaded = load_definitions(project)
    assert loaded.definitions["helper"].prompt == "A."
    assert len(loaded.problems) == 1 and loaded.problems[0].field == "name"
    assert "already defined by" in loaded.problems[0].message


def test_get_definition_unknown_lists_available(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        get_definition("nope", tmp_path)
    assert "available: code-reviewer, explore, general-purpose, plan" in str(info.value)
    assert info.value.exit_code == 2


def test_cli_list_json_and_show(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(paths.user_agents_dir() / "plan.md", "---\ndescription: my plan\n---\nPlan it.\n")
    write(project / ".swarm/agents/plan.md", "---\ndescription: proj plan\n---\nProj plan.\n")
    write(project / ".swarm/agents/oops.md", "---\npermission_mode: yolo\n---\nx\n")
    monkeypatch.chdir(project / "src")
    runner = CliRunner()
    result = runner.invoke(cli, ["agents", "list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_name = {d["name"]: d for d in data}
    assert sorted(by_name) == ["code-reviewer", "explore", "general-purpose", "plan"]
    assert by_name["plan"]["source"] == "project"
    assert [s["source"] for s in by_name["plan"]["overrides"]] == ["user", "builtin"]
    assert by_name["explore"]["tools"] == ["Read", "Glob", "Grep"]
    assert "swarm: warning:" in result.stderr and "oops.md: field 'permission_mode'" in result.stderr

    human = runner.invoke(cli, ["agents", "list"])
    assert human.exit_code == 0
    assert "project (overrides user, builtin)" in human.stdout
    assert f"plan: {project / '.swarm/agents/plan.md'} overrides user" in human.stdout

    shown = runner.invoke(cli, ["agents", "show", "plan", "--json"])
    assert json.loads(shown.stdout)["prompt"] == "Proj plan."
    text = runner.invoke(cli, ["agents", "show", "explore", "--cwd", str(project)])
    assert "tools:            Read, Glob, Grep" in text.stdout and "read-only" in text.stdout


# -- the start-up fast path: pre-parsed built-ins, no YAML on a spawn ------------------------------

def test_builtins_are_valid_definitions_and_each_load_is_a_fresh_copy() -> None:
    """The built-ins are built without validation (they are plain data): checking each one's
    fields as a file's are checked must give the same definition, and a caller changing one
    cannot change the next load."""
    from swarm.core.agents.fields import DefinitionFields, checked

    fast = _load_builtins()
    assert [d.name for d in fast] == ["code-reviewer", "explore", "general-purpose", "plan"]
    for quick in fast:
        fields = {name: getattr(quick, name) for name in DefinitionFields.model_fields}
        assert checked(fields, quick.prompt, "builtin", quick.path, []) == quick
    fast[0].tools.append("Write")  # type: ignore[union-attr]
    assert _load_builtins()[0].tools == ["Read", "Glob", "Grep", "Bash"]


def test_seed_spellings_and_model_inherit(project: Path) -> None:
    """The seeds' field names are the same fields; `model: inherit` is no model id."""
    write(project / ".swarm/agents/rev.md",
          "---\nagentType: reviewer\nwhenToUse: reviews diffs\nmaxTurns: 3\n"
          "disallowedTools: [Bash]\npermissionMode: acceptEdits\nmodel: inherit\n---\nReview.\n")
    loaded = load_definitions(project)
    assert loaded.problems == []
    reviewer = loaded.definitions["reviewer"]
    assert (reviewer.description, reviewer.max_turns, reviewer.disallowed_tools,
            reviewer.permission_mode, reviewer.model) == (
        "reviews diffs", 3, ["Bash"], "acceptEdits", None)
    assert "model" not in reviewer.defaults()


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("---\ntools: [Read, Fly]\n---\nbody\n", "field 'tools': unknown tool 'Fly' ignored"),
        ("---\ntools: [read]\n---\nbody\n", "unknown tool 'read' ignored (did you mean 'Read'?)"),
        ("---\ntoolz: [Read]\n---\nbody\n", "field 'toolz': unknown field, ignored"),
        ("---\ncriticalSystemReminder_EXPERIMENTAL: x\n---\nbody\n",
         "field 'criticalSystemReminder_EXPERIMENTAL': accepted, but does nothing"),
    ],
)
def test_an_unknown_key_or_tool_is_one_warning_and_the_rest_applies(
        project: Path, text: str, warning: str) -> None:
    path = write(project / ".swarm/agents/odd.md", text)
    loaded = load_definitions(project)
    assert loaded.problems == []
    odd = loaded.definitions["odd"]
    assert odd.prompt == "body"
    assert len(odd.warnings) == 1 and odd.warnings[0].startswith(f"{path}: ")
    assert warning in odd.warnings[0]


SEED_DEFINITION = """---
name: code-reviewer
description: Reviews code for quality
tools: Read, Grep, Glob, Bash, WebFetch
model: inherit
permissionMode: acceptEdits
maxTurns: 5
color: blue
background: true
omitClaudeMd: true
skills: [review]
effort: high
memory: project
criticalSystemReminder_EXPERIMENTAL: be careful
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: echo checked
---
You review code.
"""


def test_a_claude_code_definition_with_seed_keys_loads_with_warnings(
        project: Path, tmp_path: Path) -> None:
    path = write(project / ".claude/agents/code-reviewer.md", SEED_DEFINITION)
    loaded = load_definitions(project)
    assert loaded.problems == []
    found = loaded.definitions["code-reviewer"]
    assert found.source == "project" and found.path == str(path)
    assert found.tools == ["Read", "Grep", "Glob", "Bash"]
    assert found.model is None and found.permission_mode == "acceptEdits"
    assert found.max_turns == 5 and found.background is True and found.omit_project_memory
    assert found.hooks == {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo checked"}]}]}
    assert found.skills == ["review"]  # preloaded into its prompt (tests/unit/core/agents/test_skills.py)
    assert found.memory == "project"  # tests/unit/core/agents/test_memory.py
    noted = sorted(w.removeprefix(f"{path}: ").split(":")[0] for w in found.warnings)
    assert noted == sorted(["field 'tools'", "field 'criticalSystemReminder_EXPERIMENTAL'"])
    assert found.effort == "high"  # tests/test_effort_agents.py


def test_claude_user_agents_load_below_swarms_own_and_the_project(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(home / ".claude/agents/helper.md", "---\ndescription: from claude\n---\nC.\n")
    write(home / ".claude/agents/mine.md", "---\ndescription: claude only\n---\nM.\n")
    write(paths.user_agents_dir() / "helper.md", "---\ndescription: from swarm\n---\nS.\n")
    write(project / ".claude/agents/helper.md", "---\ndescription: claude project\n---\nP.\n")
    write(project / ".swarm/agents/helper.md", "---\ndescription: swarm project\n---\nQ.\n")
    loaded = load_definitions(project)
    assert loaded.definitions["mine"].source == "user"
    helper = loaded.definitions["helper"]
    assert helper.description == "swarm project"
    assert [s.path for s in helper.overrides] == [
        str(project / ".claude/agents/helper.md"), str(paths.user_agents_dir() / "helper.md"),
        str(home / ".claude/agents/helper.md")]


@pytest.mark.usefixtures("trust_projects")
def test_a_definitions_bad_colour_is_a_problem_a_good_one_loads(tmp_path: Path) -> None:
    agents = tmp_path / ".swarm" / "agents"
    agents.mkdir(parents=True)
    (agents / "bad.md").write_text(f"---\ncolor: '{BREAKOUT}'\n---\nbody\n")
    (agents / "good.md").write_text("---\ncolor: '#12AB9F'\n---\nbody\n")
    loaded = load_definitions(tmp_path)
    assert "bad" not in loaded.definitions
    assert [p.field for p in loaded.problems] == ["color"]
    assert loaded.definitions["good"].color == "#12ab9f"
