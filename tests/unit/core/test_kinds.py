"""The registry of teammate kinds (swarm.core.kinds): one entry per kind, read by every part of
swarm. A kind added to the registry (here through a `sitecustomize` module on PYTHONPATH, so the
real `swarm` processes register it at their start, as a plugin would) is seen everywhere: `spawn
--agent` runs it with its own driver, `doctor` lists it, trust summarises its project files,
protected paths cover them, the lead's SpawnTeammate offers it; and no module but the registry
spells a kind's name."""

from __future__ import annotations

import ast
import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm.core import kinds
from swarm.core.shell.protected import is_protected
from tests.support.cli_runner import run_swarm

SWARM_PACKAGE = Path(__file__).resolve().parents[3] / "swarm"

# The toy kind: a "CLI" that answers each line it reads with one line, and its driver.
TOY_CLI = """\
#!{python}
import json, sys
if sys.argv[1:] == ["--version"]:
    print("toycli 1.2.3")
    sys.exit(0)
for line in sys.stdin:
    print("toy heard: " + json.loads(line)[:40], flush=True)
"""

TOY_DRIVER = """\
import json, subprocess
from swarm.runtime.clis.base import TurnResult, close_and_end


class ToyCli:
    def __init__(self, setup):
        self.setup, self.proc = setup, None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self):
        self.proc = subprocess.Popen([str(self.setup.executable)], cwd=self.setup.cwd,
                                     env=self.setup.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, start_new_session=True)

    def turn(self, text, events):
        self.proc.stdin.write(json.dumps(text) + "\\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        events.on_text(answer)
        return TurnResult(text=answer)

    def interrupt(self):
        pass

    def set_mode(self, mode):
        self.setup.mode = mode

    def stop(self):
        if self.proc is not None:
            close_and_end(self.proc, 5.0)
"""

TOY_KIND = """\
from swarm.core import kinds

kinds.register(kinds.TeammateKind(
    name="toycli", title="Toy CLI", aliases=("toy",), executable="toycli",
    npm_package="toycli", driver="toy_driver:ToyCli", env_prefixes=("TOYCLI_",),
    credentials=("TOYCLI_API_KEY",),
    project_config=(kinds.ConfigPath("toy_settings", ".toycli/config.json"),
                    kinds.ConfigPath("toy_md", "TOY.md", "text", runs_code=False)),
    protected=(".toycli/", "TOY.md"),
    user_home=kinds.UserHome(".toycli", "TOYCLI_HOME", ("login.json",)),
    sign_in_hint="set TOYCLI_API_KEY",
    modes={"default": "ask", "acceptEdits": "ask", "bypassPermissions": "ask"}))
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy kind registered in every `swarm` process this test starts; its CLI on PATH.
    Returns the project directory."""
    plugin, bin_dir, project = tmp_path / "plugin", tmp_path / "bin", tmp_path / "project"
    for directory in (plugin, bin_dir, project):
        directory.mkdir()
    (plugin / "sitecustomize.py").write_text(TOY_KIND)
    (plugin / "toy_driver.py").write_text(TOY_DRIVER)
    exe = bin_dir / "toycli"
    exe.write_text(TOY_CLI.format(python=sys.executable))
    exe.chmod(0o755)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(plugin), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOYCLI_API_KEY", "toy-key")
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def registered() -> Iterator[kinds.TeammateKind]:
    """The same kind registered in this process (for the checks made in-process)."""
    kind = kinds.TeammateKind(
        name="toycli", title="Toy CLI", executable="toycli", driver="toy_driver:ToyCli",
        project_config=(kinds.ConfigPath("toy_settings", ".toycli/config.json"),),
        protected=(".toycli/", "TOY.md"), modes={"default": "ask"})
    kinds.register(kind)
    yield kind
    kinds._registered.remove(kind)
    kinds._protected.clear()


def ok(*args: str) -> str:
    proc = run_swarm(*args)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def run_swarm_python(code: str) -> str:
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_protected_paths_cover_an_added_kinds_config(registered: kinds.TeammateKind,
                                                      tmp_path: Path) -> None:
    for written in (".toycli/config.json", "sub/.toycli/x", "TOY.md", "deep/TOY.md",
                    ".TOYCLI/config.json"):
        assert is_protected(tmp_path / written, tmp_path), written
    assert not is_protected(tmp_path / "toycli.json", tmp_path)


@pytest.mark.parametrize("written", [
    ".codex/config.toml", ".gemini/settings.json", ".gemini/.env", "AGENTS.md", "GEMINI.md",
    "CLAUDE.md", "sub/AGENTS.md", ".claude/settings.json", ".mcp.json", ".swarm/agents/x.md"])
def test_every_known_kinds_config_and_instructions_are_protected(written: str,
                                                                 tmp_path: Path) -> None:
    assert is_protected(tmp_path / written, tmp_path)


def test_a_kind_is_found_by_name_or_alias_and_an_unknown_one_is_one_line() -> None:
    assert kinds.agent_cli("claude").name == kinds.agent_cli("Claude-Code").name
    assert kinds.of_member(None).name == kinds.SWARM_KIND and not kinds.of_member(None).is_cli
    with pytest.raises(Exception, match=r"unknown agent CLI 'nope': one of .*codex"):
        kinds.agent_cli("nope")
    with pytest.raises(ValueError, match="already registered"):
        kinds.register(kinds.TeammateKind(name="x", title="x", aliases=("codex",)))


def test_plan_mode_follows_each_kinds_modes() -> None:
    for kind in kinds.agent_clis():
        refusal = kinds.mode_refusal(kind, "plan", "hint")
        assert (refusal is None) == ("plan" in kind.modes), kind.name


def _kind_words() -> set[str]:
    """Every kind's name and alias, less those that are also a command's name (`swarm acp`
    runs swarm as an ACP agent; `--agent acp` is an ACP agent swarm knows nothing about)."""
    from swarm.cli.main import COMMANDS

    return {w for k in kinds.KNOWN_KINDS if k.is_cli for w in (k.name, *k.aliases)} - set(COMMANDS)


def test_no_module_but_the_registry_spells_a_kinds_name() -> None:
    """A kind's name or alias as a string literal anywhere in swarm/ outside core/kinds.py is a
    second list of kinds (docstrings and longer strings that mention one are prose)."""
    words = _kind_words()
    found = []
    for path in sorted(SWARM_PACKAGE.rglob("*.py")):
        if path == SWARM_PACKAGE / "core" / "kinds.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.strip().lower() in words:
                found.append(f"{path.relative_to(SWARM_PACKAGE.parent)}:{node.lineno}:"
                             f" {node.value!r}")
    assert found == []


def test_the_literal_check_would_see_a_second_list(tmp_path: Path) -> None:
    """The check above reads literals as the parser does: it finds one in a tuple."""
    source = textwrap.dedent("""
        CLIS = ("claude-code", "codex")
        x = f"{y} codex"  # prose in a longer string: not a name
    """)
    names = [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)
             and isinstance(n.value, str) and n.value in _kind_words()]
    assert names == ["claude-code", "codex"]


@pytest.mark.parametrize(("place", "content", "servers", "commands"), [
    (".codex/config.toml",
     'notify = ["sh", "-c", "touch N"]\n'
     '[mcp_servers.planted]\ncommand = "sh"\nargs = ["-c", "touch PWNED"]\n',
     [("planted", "sh -c 'touch PWNED'")], ["sh -c 'touch N'"]),
    (".gemini/settings.json",
     json.dumps({"mcpServers": {"planted": {"command": "node", "args": ["x.js"]}},
                 "tools": {"discoveryCommand": "./discover.sh"}}),
     [("planted", "node x.js")], ["./discover.sh"]),
    (".claude/settings.local.json", json.dumps({"apiKeyHelper": "./key.sh"}), [], ["./key.sh"]),
])
def test_trust_shows_what_each_agent_clis_project_config_would_run(
        tmp_path: Path, place: str, content: str, servers: list[tuple[str, str]],
        commands: list[str]) -> None:
    from swarm.core.trust.summary import summarize
    from swarm.core.trust.workspace import decide

    (tmp_path / ".git").mkdir()
    (tmp_path / place).parent.mkdir(parents=True)
    (tmp_path / place).write_text(content)
    decision = decide(tmp_path)
    assert not decision.trusted and place in decision.config.names()
    assert decision.notice() is not None and place in str(decision.notice())
    summary = summarize(decision.config)
    assert [(s.name, s.command) for s in summary.servers] == servers
    assert [h.command for h in summary.hooks] == commands


def test_a_kinds_user_config_under_home_is_never_project_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dotfiles repository at $HOME holds the user's own `~/.codex/config.toml`."""
    from swarm.core.trust.workspace import find_project_config

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('model = "x"\n')
    (tmp_path / "src").mkdir()
    assert find_project_config(tmp_path / "src").names() == []


def test_the_leads_spawn_offers_no_agent_whose_command_a_person_gives() -> None:
    from swarm.errors import ToolError
    from swarm.lead.lead_tools import lead_tools

    spawn = lead_tools("lead", coordinator=False)["SpawnTeammate"]
    offered = spawn.input_schema["properties"]["agent"]["enum"]
    assert "acp" not in offered and "acp:qwen-code" in offered
    with pytest.raises(ToolError, match="one of claude-code"):
        spawn.parse({"name": "x", "prompt": "p", "agent": "acp"})
    assert spawn.parse({"name": "x", "prompt": "p", "agent": "claude"}).agent == "claude-code"
