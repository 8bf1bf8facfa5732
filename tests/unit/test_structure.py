"""The structure stays as docs/DESIGN.md maps it: no run-time import circle in swarm/, every
module path the docs and swarm's own docstrings and comments name exists, the contract the code
follows is in the repository's docs (no SPEC outside it, no issue numbers in code), only the
store itself knows which store is selected, and no unit test starts processes by a fixture or is
marked slow (docs/design/tests.md)."""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
SWARM = ROOT / "swarm"
LAYERS = ("core", "runtime", "ops", "lead", "mcp_server", "cli", "backends")
# A dotted path into swarm: `swarm.x.y`, or one that starts with a layer (`runtime.turn.loop`).
DOTTED = re.compile(rf"(?<![\w./-])(?:swarm\.)?(?:{'|'.join(LAYERS)})(?:\.[A-Za-z_]\w*)+"
                    rf"|(?<![\w./-])swarm\.[a-z_]\w*(?:\.[A-Za-z_]\w*)*")
# A path into swarm: `runtime/teammate/agent.py`, `core/store/`, `cli/main._fail` (`swarm/`
# optional).
SLASHED = re.compile(rf"(?<![\w./-])(?:swarm/)?(?:{'|'.join(LAYERS)})(?:/\w+)+(?:\.py\b|/|(?:\.\w+)+)?"
                     rf"|(?<![\w./-])(?:swarm/)?(?:{'|'.join(LAYERS)})/")
# git's own configuration keys, which read like a dotted path into core/.
GIT_KEYS = {"core.fsmonitor", "core.hooksPath"}
NOT_MODULES = {"md", "py", "json", "jsonl", "toml", "yaml", "yml", "txt", "log", "lock", "key",
               "sh", "html", "svg", "css", "js"}


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """A parse builds a tree of thousands of objects and drops it: the cyclic collector's passes
    over them, and over all else alive, would cost more than the parse (an AST has no cycles,
    its objects go with their last reference)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in SWARM.rglob("*.py")}


@cache
def top_names(module: str) -> frozenset[str]:
    """What a module defines or imports at its top (and a package's submodules)."""
    with collector_paused():
        tree = ast.parse(modules()[module].read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    names |= {m.rpartition(".")[2] for m in modules() if m.rpartition(".")[0] == module}
    return frozenset(names)


def resolves(dotted: str) -> bool:
    """`dotted` names a module of swarm, optionally followed by what that module defines."""
    parts = dotted.removeprefix("swarm.").split(".")
    if parts[-1] in NOT_MODULES or dotted in GIT_KEYS:  # a file name (`lead.md`), a git key
        return True
    for cut in range(len(parts), 0, -1):
        module = ".".join(["swarm", *parts[:cut]])
        if module in modules():
            rest = parts[cut:]
            return not rest or rest[0] in top_names(module)
    return False


def path_resolves(slashed: str) -> bool:
    """`runtime/teammate/` is a folder of swarm, `core/store/disk.py` a file, and
    `cli/main._fail` a module (`cli/main.py`) and what it defines."""
    path = slashed.removeprefix("swarm/")
    if path.endswith("/") or path.endswith(".py"):
        return (SWARM / path).exists()
    folder, _, attributes = path.partition(".")
    return resolves(".".join([*folder.split("/"), *filter(None, attributes.split("."))]))


# A string literal (any prefix, any quotes) or a comment, whichever starts first: what starts
# inside a string is never a comment. For parsed Python this finds the comments tokenize finds,
# the same text on the same lines, at a tenth of its cost (the test of the scan below compares).
STRING_OR_COMMENT = re.compile("|".join((
    r"'''(?:\\.|[^\\])*?'''", r'"""(?:\\.|[^\\])*?"""',
    r"'(?:\\.|[^\\'\r\n])*'", r'"(?:\\.|[^\\"\r\n])*"', r"(#[^\r\n]*)")), re.S)


def comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment of Python source."""
    line, counted = 1, 0
    for match in STRING_OR_COMMENT.finditer(source):
        if match.group(1) is not None:
            line += source.count("\n", counted, match.start())
            counted = match.start()
            yield line, match.group(1)


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of `body`, nested ones too (in blocks, handlers, cases, definitions):
    where a definition or an import can be, without walking the expressions."""
    for statement in body:
        yield statement
        for field in ("body", "orelse", "finalbody"):
            yield from statements(getattr(statement, field, []))
        for block in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            yield from statements(block.body)


def docstring(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
              ) -> Iterator[tuple[int, str]]:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        yield body[0].lineno, body[0].value.value


class Scan(NamedTuple):
    """What the checks read of one of swarm's modules, parsed once."""
    prose: tuple[tuple[int, str], ...]  # (line, text) of every docstring and comment
    imports: frozenset[str]  # the modules of swarm it imports at run time


@cache
def scan(path: Path) -> Scan:
    source = path.read_text()
    with collector_paused():
        tree = ast.parse(source)
        return Scan(prose_of(source, tree),
                    frozenset(imports_of(module_name(path), path, tree, "TYPE_CHECKING" in source)))


def prose_of(source: str, tree: ast.Module) -> tuple[tuple[int, str], ...]:
    """(line, text) of every docstring (in the order of their lines) and comment of `source`."""
    found = [*docstring(tree)]
    for statement in statements(tree.body):
        if isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found += docstring(statement)
    return (*sorted(found, key=lambda f: f[0]), *comments(source))


def docstrings_and_comments(path: Path) -> tuple[tuple[int, str], ...]:
    """(line, text) of every docstring and comment of a Python file."""
    return scan(path).prose


def prose() -> Iterator[tuple[str, str]]:
    """(where, text): swarm's docstrings and comments, and the docs."""
    for path in sorted(SWARM.rglob("*.py")):
        for line, text in docstrings_and_comments(path):
            yield f"{path.relative_to(ROOT)}:{line}", text
    for path in sorted((ROOT / "docs").rglob("*.md")):
        yield str(path.relative_to(ROOT)), path.read_text()


def run_time_imports() -> dict[str, set[str]]:
    """Each module's imports of swarm's modules that run: at its top or in a function, not under
    `if TYPE_CHECKING:`."""
    return {name: set(scan(path).imports) for name, path in modules().items()}


def imports_of(name: str, path: Path, tree: ast.Module, typing: bool) -> set[str]:
    """(`typing`: the source names TYPE_CHECKING; only then can a test of an `if` say it.)"""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for child in body:
            if typing and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                visit(child.orelse)
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join([*up, base] if base else up)
                found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base
                             for a in child.names)
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(child, field, []))
            for block in (*getattr(child, "handlers", ()), *getattr(child, "cases", ())):
                visit(block.body)

    visit(tree.body)
    return {m for m in found if m in modules() and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for after in graph[node]:
            if after not in index:
                connect(after)
                low[node] = min(low[node], low[after])
            elif after in stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            if group:
                out.append(sorted([node, *group]))

    for node in graph:
        if node not in index:
            connect(node)
    return out


def test_no_run_time_import_circle_in_swarm() -> None:
    graph = run_time_imports()
    assert len(graph) > 200
    assert circles(graph) == []


def test_the_circle_check_sees_a_circle_through_a_function_level_import() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_every_module_path_named_in_docstrings_comments_and_docs_exists() -> None:
    missing = [f"{where}: {dotted}" for where, text in prose()
               for dotted in DOTTED.findall(text) if not resolves(dotted)]
    missing += [f"{where}: {slashed}" for where, text in prose()
                for slashed in SLASHED.findall(text) if not path_resolves(slashed)]
    assert missing == []


def test_a_stale_path_does_not_resolve() -> None:
    assert resolves("runtime.turn.loop") and resolves("swarm.runtime.turn.loop.Loop")
    assert resolves("core.records.permissions.Decision") and resolves("swarm.settings")
    assert not resolves("runtime.loop") and not resolves("core.names.ModeCap")
    assert not resolves("swarm.runtime.turn.loop.Nothing")
    assert path_resolves("runtime/turn/") and path_resolves("swarm/core/store/disk.py")
    assert path_resolves("cli/main._fail") and path_resolves("core/store")
    assert not path_resolves("core/view.View") and not path_resolves("runtime/console.py")


def test_the_contract_is_in_the_repository_and_code_names_no_issue() -> None:
    spec = [where for where, text in prose() if re.search(r"\bSPEC\b|SPEC\.md|\.\./shared", text)]
    spec += [str(p.relative_to(ROOT)) for p in [*SWARM.rglob("*.py"), ROOT / "README.md"]
             if re.search(r"\bSPEC\b|SPEC\.md|\.\./shared/", p.read_text())]
    assert spec == []
    code = [*SWARM.rglob("*.py"), *(ROOT / "scripts").glob("*.py"), *(ROOT / "tests").rglob("*.py")]
    issues = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in code
              if "ssue" in (text := p.read_text())  # what the pattern needs, found fast
              for m in re.finditer(r"\b[Ii]ssues? #?\d+", text)]
    assert issues == []


def test_only_the_store_knows_which_store_is_selected() -> None:
    knowing = [module for module, path in modules().items()
               if re.search(r"settings\.store\(\)|\.remote\(\)|RedisConnection|RedisStore",
                            path.read_text())
               and not module.startswith("swarm.core.store")]
    assert knowing == []


TRICKY = '''"""A module's docstring # not a comment"""
# a comment
x = ("a # b"  # between the parts
     'c\\'d # e' r"\\" # f" f"{x!r:>{3}} # g" \'\'\'h
# i \'\'\' """j
# k""")
y = b"\\
# l" if x else rb\'\'\'m\'\'\' # n


class C:  # o
    """C's docstring"""
    @staticmethod
    def f() -> None:
        "f's # docstring"
        try:
            pass
        except* ValueError:
            def g() -> None:
                """g's docstring"""
        match x:
            case "p":
                async def h() -> None:
                    """h's docstring"""  # q
'''


def test_the_scan_finds_every_comment_and_docstring_tokenize_and_ast_finds(
        tmp_path: Path) -> None:
    for path in (tmp_path / "tricky.py", Path(__file__)):
        if not path.exists():
            path.write_text(TRICKY)
        source = path.read_text()
        tree = ast.parse(source)
        every_docstring = [(node.body[0].lineno, ast.get_docstring(node, clean=False))
                           for node in ast.walk(tree)
                           if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                         | ast.AsyncFunctionDef)
                           and ast.get_docstring(node, clean=False) is not None]
        every_comment = [(token.start[0], token.string)
                         for token in tokenize.generate_tokens(io.StringIO(source).readline)
                         if token.type == tokenize.COMMENT]
        assert sorted(every_docstring) + every_comment == list(prose_of(source, tree))
    assert len(prose_of(TRICKY, ast.parse(TRICKY))) == 5 + 5


# The fixtures that start processes (real teammates, tmux, sshd): tests/system/ only.
PROCESS_FIXTURES = frozenset({"crew", "server", "session", "ssh_host"})


def test_no_unit_test_is_marked_slow_or_uses_a_fixture_that_starts_processes() -> None:
    found = []
    for path in sorted((ROOT / "tests" / "unit").rglob("*.py")):
        source = path.read_text()
        where = path.relative_to(ROOT)
        found += [f"{where}: marked slow" for _ in re.finditer(r"mark\.slow\b", source)]
        if not any(name in source for name in PROCESS_FIXTURES):
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    node.name.startswith("test") or
                    any("fixture" in ast.unparse(d) for d in node.decorator_list)):
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                found += [f"{where}:{node.lineno}: {a.arg}" for a in arguments
                          if a.arg in PROCESS_FIXTURES]
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("usefixtures"):
                found += [f"{where}:{node.lineno}: {a.value}" for a in node.args
                          if isinstance(a, ast.Constant) and a.value in PROCESS_FIXTURES]
    assert found == []
