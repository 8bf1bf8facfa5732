"""The user guide stays true to the code, and the README stays a first screen: a new feature
gets a page under docs/guide/ (linked from the README), not a README section.

- Each guide page's ```sh blocks run as a reader pastes them: the page's blocks in order, one
  logical command at a time in one bash (so `export` carries over), in a git checkout with one
  commit, with its own SWARM_HOME and HOME, the hidden backend, and the fake model servers for
  a page whose commands name a provider. Every command must exit 0, and no teammate may be left
  running. A ```python block runs the same way; a ```LANG file=NAME block is a file the page
  asks you to make: it is written to NAME before the commands run.
- A ```sh no-run block needs what this machine cannot have (a real model, a cloud account, an
  agent CLI signed in, a terminal to answer, other hosts, macOS): it is not run, but every
  `swarm` command in it, as in every block of the guide and the README, must name subcommands
  and options that its `swarm ... --help` shows.
- The README has at most 300 lines and links each guide page; every page under docs/ is reached
  from the README through links, and every relative link (and its #anchor) resolves.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from swarm.cli.main import cli
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.cli_runner import SWARM
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI
from tests.support.git_helpers import init_repo
from tests.support.helpers import as_script

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"
# The user pages under docs/ that are not in docs/guide (older, and named by code and tests).
USER_PAGES = [ROOT / "docs" / "scripted.md", ROOT / "docs" / "replay.md"]
NO_RUN = "no-run"
MAX_README_LINES = 300
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


@dataclass
class Block:
    lang: str
    words: list[str]
    body: str

    @property
    def file(self) -> str | None:
        named = [w.split("=", 1)[1] for w in self.words if w.startswith("file=")]
        return named[0] if named else None


def blocks(text: str) -> list[Block]:
    out = []
    for info, body in FENCE.findall(text):
        lang, *words = info.split() or [""]
        out.append(Block(lang, words, body))
    return out


def pages() -> list[Path]:
    return [*sorted(GUIDE.glob("*.md")), *USER_PAGES]


# -- commands, as a reader pastes them ----------------------------------------------------------
def commands(body: str) -> list[str]:
    """A block's logical commands: continued lines joined, a here-document kept whole with its
    command, comment lines and blank lines left out."""
    out: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.strip().startswith("#"):
            continue
        while line.endswith("\\") and i < len(lines):
            line += "\n" + lines[i]  # bash reads the backslash-newline as one line
            i += 1
        heredoc = HEREDOC.search(line)
        if heredoc:
            end = heredoc.group(1)
            while i < len(lines):
                line += "\n" + lines[i]
                i += 1
                if lines[i - 1].strip() == end:
                    break
        out.append(line)
    return out


def page_steps(page: Path) -> tuple[dict[str, str], list[str]]:
    """The files a page asks you to make, and its commands (python blocks as one step each)."""
    files: dict[str, str] = {}
    steps: list[str] = []
    for block in blocks(page.read_text()):
        if block.file:
            files[block.file] = block.body
        elif block.lang == "sh" and NO_RUN not in block.words:
            steps += commands(block.body)
        elif block.lang == "python" and NO_RUN not in block.words:
            steps.append(f"python - <<'PYTHON_BLOCK'\n{block.body}PYTHON_BLOCK")
    return files, steps


# -- `swarm` commands named anywhere: checked against --help ------------------------------------
def swarm_commands(step: str) -> list[list[str]]:
    """Each simple command of `step` that runs `swarm` (also inside `$(...)`), as its words."""
    body = step.split("\n", 1)[0] if HEREDOC.search(step) else step.replace("\\\n", " ")
    lexer = shlex.shlex(body, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: the check below names the line
        return [["<unparsable>", body]]
    found: list[list[str]] = []
    current: list[str] = []
    skip_next = False
    for token in [*tokens, ";"]:
        if skip_next:
            skip_next = False
            continue
        if token in (">", ">>", "<", "2>", "&>"):
            skip_next = True  # a redirection's target
        elif token and set(token) <= set("&|;()"):
            if current and current[0] == "swarm":
                found.append(current[1:])
            current = []
        else:
            current.append(token)
    return found


@dataclass
class HelpCheck:
    seen: dict[tuple[str, ...], str] = field(default_factory=dict)

    def help(self, path: tuple[str, ...]) -> str:
        if path not in self.seen:
            result = CliRunner().invoke(cli, [*path, "--help"], prog_name="swarm")
            assert result.exit_code == 0, f"`swarm {' '.join(path)} --help`: {result.output}"
            self.seen[path] = result.output
        return self.seen[path]

    def problems(self, words: list[str]) -> list[str]:
        """What in `swarm WORDS` its --help does not show: a subcommand, an option."""
        if words[:1] == ["<unparsable>"]:
            return [f"cannot parse: {words[1]}"]
        path: list[str] = []
        group = cli
        rest = list(words)
        ctx = click.Context(cli)
        while rest and isinstance(group, click.Group):
            sub = group.get_command(ctx, rest[0])
            if sub is None:
                break
            path.append(rest.pop(0))
            group = sub
        if isinstance(group, click.Group) and rest and not rest[0].startswith("-"):
            return [f"`swarm {' '.join(path)}` has no subcommand {rest[0]!r}"]
        text = self.help(tuple(path))
        out = []
        for word in rest:
            if word == "--":
                break
            if not word.startswith("-") or word == "-":
                continue
            option = word.split("=", 1)[0]
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text):
                out.append(f"`swarm {' '.join(path)}` has no option {option}")
        return out


def all_swarm_commands() -> Iterator[tuple[str, list[str]]]:
    for page in [README, *pages()]:
        for block in blocks(page.read_text()):
            if block.lang != "sh":
                continue
            for step in commands(block.body):
                for words in swarm_commands(step):
                    yield f"{page.relative_to(ROOT)}: {step.splitlines()[0]}", words


def test_every_swarm_command_in_the_docs_names_what_its_help_shows() -> None:
    check = HelpCheck()
    checked = list(all_swarm_commands())
    assert len(checked) > 80
    problems = [f"{where}: {problem}" for where, words in checked
                for problem in check.problems(words)]
    assert problems == []


def test_the_syntax_check_finds_a_wrong_subcommand_or_option() -> None:
    check = HelpCheck()
    assert swarm_commands("export T=$(swarm team create x) && swarm status -w | cat") == [
        ["team", "create", "x"], ["status", "-w"]]
    assert swarm_commands("cat > f <<'EOF'\nswarm nope\nEOF") == []
    assert check.problems(["team", "create", "x", "--description", "d"]) == []
    assert check.problems(["team", "creat", "x"]) == ["`swarm team` has no subcommand 'creat'"]
    assert check.problems(["spawn", "w", "--model=shell", "--worktre"]) == [
        "`swarm spawn` has no option --worktre"]
    assert check.problems(["diff", "w", "--stat", "--json"]) == []
    assert commands("a \\\n  b\n# c\n\ncat > x <<'EOF'\n# kept\nEOF\nd") == [
        "a \\\n  b", "cat > x <<'EOF'\n# kept\nEOF", "d"]


def test_no_run_blocks_are_the_exception() -> None:
    """Most of the guide runs: a page marks only what this machine cannot do."""
    runnable = sum(len(page_steps(page)[1]) for page in pages())
    marked = [page.name for page in pages() for block in blocks(page.read_text())
              if block.lang == "sh" and NO_RUN in block.words]
    assert runnable > 60 and len(marked) < 15, (runnable, marked)


# -- the README and the links -------------------------------------------------------------------
def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def links(page: Path) -> list[tuple[Path, str]]:
    """Relative links of a page (outside code blocks), as (target file, anchor)."""
    text = FENCE.sub("", page.read_text())
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"\w+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        out.append(((page.parent / path).resolve() if path else page, anchor))
    return out


def test_the_readme_is_a_first_screen_and_links_every_guide_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_README_LINES
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[:3] == ["Install", "Quickstart", "Watching a team"]
    linked = {target for target, _ in links(README)}
    missing = [p.name for p in GUIDE.glob("*.md") if p.resolve() not in linked]
    assert missing == []


def test_every_docs_page_is_reached_from_the_readme_and_every_link_resolves() -> None:
    seen: set[Path] = set()
    todo = [README.resolve()]
    broken = []
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for target, anchor in links(page):
            if target.is_dir():
                todo += [p.resolve() for p in target.glob("*.md")]
                continue
            if not target.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
                continue
            if target.suffix == ".md":
                heads = re.findall(r"^#+ (.+)$", FENCE.sub("", target.read_text()), re.MULTILINE)
                if anchor and anchor not in {slug(h) for h in heads}:
                    broken.append(f"{page.relative_to(ROOT)} -> {target.name}#{anchor}")
                todo.append(target)
    assert broken == []
    unreached = [str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")
                 if p.resolve() not in seen]
    assert unreached == []


# -- running the pages --------------------------------------------------------------------------
# What a page's commands need beyond a git checkout: the fake model servers for the providers
# its commands name (the page says which keys it assumes set).
NEEDS: dict[str, tuple[str, ...]] = {
    "leading.md": ("anthropic",),
    "providers.md": ("anthropic", "openai", "ollama"),
    "replay.md": ("anthropic",),
}


def runnable_pages() -> list[Path]:
    return [page for page in pages() if page_steps(page)[1]]


@pytest.mark.parametrize("page", runnable_pages(), ids=lambda p: p.name)
def test_the_page_commands_run(page: Path, tmp_path: Path, swarm_home: Path) -> None:
    files, steps = page_steps(page)
    project = init_repo(tmp_path / "project", {"README.md": "a project\n",
                                               "src/app.py": "print('hi')\n"})
    for name, body in files.items():
        (project / name).write_text(body)
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "SWARM_BACKEND": "hidden", "HOME": str(home),
           "PATH": f"{Path(SWARM).parent}{os.pathsep}{os.environ['PATH']}"}
    with ExitStack() as stack:
        needs = NEEDS.get(page.name, ())
        if "anthropic" in needs:
            api = stack.enter_context(FakeAnthropic())
            env.update(ANTHROPIC_API_KEY="sk-ant-fake", ANTHROPIC_BASE_URL=api.base_url)
        if "openai" in needs or "ollama" in needs:
            openai = stack.enter_context(FakeOpenAI())
            env.update(OPENAI_API_KEY="sk-fake", OPENAI_BASE_URL=openai.api_url,
                       OLLAMA_HOST=openai.base_url)
        if needs:
            env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        try:
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", as_script(steps)],
                                  capture_output=True, text=True, cwd=project, env=env,
                                  timeout=600)
        finally:
            left = agent_processes(swarm_home)
            for leftover in left:
                stop_tree(leftover.pid)
    assert proc.returncode == 0, f"{proc.stderr[-3000:]}\n--- stdout:\n{proc.stdout[-3000:]}"
    assert proc.stdout.count("\n>>> ") == len(steps)  # every command ran
    assert left == [], "the page leaves teammates running: end it with a shutdown"
