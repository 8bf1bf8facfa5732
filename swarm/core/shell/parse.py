"""A shell command as bash would run it: its simple commands, for the Bash permission rules.

tree-sitter-bash parses the command; every simple command is collected, wherever it sits (lists,
pipelines, subshells, `{ ..; }`, bodies of if/for/while/functions, `$(..)`, backticks, `<(..)`,
`>(..)`, unquoted here-documents) and so are the strings run by `bash -c`/`sh -c`/`zsh -c`,
`eval` and `trap` (parsed again, MAX_DEPTH deep). Each word is taken after quote removal
(`r''m`, `'rm'`, `\\rm`, `$'\\x72m'` are `rm`); a word whose value comes from an expansion
(`$X`, `$(..)`, a glob, a brace expansion) is marked not literal. Wrappers (`sudo`, `env`,
`xargs`, ...) are looked through by `shellwrappers.unwrap`: each is one layer of the command.
Output redirections (`>`, `>>`, `&>`, `>|`, `>&` to a file) and the files `tee`, `cp`/`mv`/`ln`
and some wrappers (`time -o`, `strace -o`, `flock`'s lock) write are the command's writes; the
file a `<` redirection gives it is its `stdin` (what `patch` or `tar -x` read names from).

A command is opaque when it cannot be read: it does not parse (tree-sitter ERROR/MISSING), its
program comes from an expansion, a shell reads its commands from input (`curl .. | sh`, `bash
<(..)`, `source /dev/stdin`, `su` or `chroot DIR` with no command), a wrapper builds them
(`parallel`, `at`), it defines an alias or `hash -p`, it nests shell strings deeper than
MAX_DEPTH, or a string bash evaluates beyond its commands (arithmetic, a subscript, a variable's
value, a prompt expansion `${x@P}`, an indirection `${!x}`) may hold code (`shelleval`).
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from msgspec import Struct

from swarm.core.shell.evaluation import CHANGES_DIR, Evaluation
from swarm.core.shell.syntax import NODE_KINDS, visit
from swarm.core.shell.words import Argv, Word, basename, rebinds, shell_string
from swarm.core.shell.wrappers import unwrap

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_DEPTH = 4  # bash -c inside bash -c ...: deeper than this is opaque
EXPANSIONS = frozenset({"simple_expansion", "expansion", "command_substitution",
                        "process_substitution", "arithmetic_expansion", "brace_expression"})
OUTPUT_OPS = frozenset({">", ">>", "&>", "&>>", ">|", ">&"})
_CONTINUATION = re.compile(rb"(\\+)\n")


class SimpleCommand(Struct, frozen=True):
    text: str
    layers: tuple[Argv, ...]  # the argv as written, then what each wrapper runs
    allowable: int = 1  # leading layers an allow rule may match (none behind sudo or coproc)
    writes: tuple[Word, ...] = ()
    stdin: Word | None = None  # the file of a `<` redirection; None: a pipe, a terminal
    sets_variables: bool = False  # `X=1 cmd`, `env X=1 cmd`, `export ..`: PATH may change
    opaque: str | None = None  # why it cannot be read
    runs_string: bool = False  # bash -c / eval / trap: the string's commands follow it

    @property
    def argv(self) -> Argv:
        return self.layers[-1]

    @property
    def program(self) -> str | None:
        """The basename of what finally runs, None when unknown."""
        argv = self.argv
        if not argv or not argv[0].literal:
            return None
        return basename(argv[0].text)


_lock = threading.Lock()


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@lru_cache(maxsize=512)
def parse(command: str) -> tuple[SimpleCommand, ...]:
    """The simple commands of `command` (cached: one parse per distinct command)."""
    out: list[SimpleCommand] = []
    evaluation = Evaluation(_word)
    try:
        _parse_into(command, out, 0, evaluation)
    except RecursionError:
        out.append(_opaque(command, "it nests too deeply to read"))
    out.extend(_opaque(command, why) for why in evaluation.finish())
    if evaluation.sets_environment:  # `read PATH`, `for PATH in ..`: what later words run
        out.append(SimpleCommand(command, ((),), sets_variables=True))
    return tuple(out)


def _opaque(text: str, why: str) -> SimpleCommand:
    return SimpleCommand(text=text, layers=((),), opaque=why)


def _parse_into(source: str, out: list[SimpleCommand], depth: int, ev: Evaluation) -> None:
    if depth > MAX_DEPTH:
        out.append(_opaque(source, f"it nests shell strings more than {MAX_DEPTH} deep"))
        return
    data = source.encode()
    with _lock:
        root = _parser().parse(data).root_node
    if root.has_error:
        out.append(_opaque(source, "it does not parse as a shell command"))
    if _splits_a_word(data):
        # tree-sitter reads `r\<newline>m` as two words; bash joins them into `rm`.
        out.append(_opaque(source, "a line continuation splits a word"))
    _walk(root, data, out, (), depth, ev)


def _splits_a_word(data: bytes) -> bool:
    for match in _CONTINUATION.finditer(data):
        if len(match.group(1)) % 2 == 0:
            continue  # `\\` then a newline: an escaped backslash, the newline separates
        before = data[match.start() - 1 : match.start()]
        after = data[match.end() : match.end() + 1]
        if before.strip() and after.strip():
            return True
    return False


def _walk(node: Node, data: bytes, out: list[SimpleCommand], writes: tuple[Word, ...],
          depth: int, ev: Evaluation, stdin: Word | None = None) -> None:
    kind = node.type
    if kind in NODE_KINDS:
        visit(ev, node, data)
    if kind == "redirected_statement":
        redirects = node.children_by_field_name("redirect")
        writes = writes + _redirects(redirects, data)
        stdin = _stdin(redirects, data, stdin)
    elif kind == "command":
        out.extend(_command(node, data, writes, depth, ev, stdin))
    elif kind in ("declaration_command", "unset_command"):
        argv = tuple(Word(_text(c, data)) if i == 0 else _word(c, data)
                     for i, c in enumerate(c for c in node.children if c.type != "comment"))
        out.append(SimpleCommand(_text(node, data), (argv,), writes=writes, sets_variables=True))
    elif kind == "variable_assignments" or (
            kind == "variable_assignment" and node.parent is not None
            and node.parent.type not in ("command", "declaration_command", "variable_assignments",
                                         "c_style_for_statement")):
        out.append(SimpleCommand(_text(node, data), ((),), writes=writes, sets_variables=True))
    piped = False
    for child in node.children:
        # In a pipeline only the first command reads the statement's input; the others a pipe.
        _walk(child, data, out, writes, depth, ev, None if piped else stdin)
        piped = piped or (kind == "pipeline" and child.is_named)


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode(errors="replace")


def _redirects(nodes: list[Node], data: bytes) -> tuple[Word, ...]:
    """The files a list of redirections writes (fd duplications like 2>&1 are not files)."""
    found: list[Word] = []
    for node in nodes:
        if node.type == "heredoc_redirect":  # `cat <<EOF > out`: the > sits inside it
            found.extend(_redirects([c for c in node.children if c.type == "file_redirect"], data))
        if node.type != "file_redirect":
            continue
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if op not in OUTPUT_OPS or dest is None:
            continue
        if op == ">&" and (dest.type == "number" or dest.text == b"-"):
            continue
        found.append(_word(dest, data))
    return tuple(found)


_HERE = Word("<a here-document>", literal=False)


def _stdin(nodes: list[Node], data: bytes, current: Word | None) -> Word | None:
    """The file the last input redirection (`< f`, `0< f`) of these gives the command; a
    here-document or here-string is text, not a file; else `current` (the enclosing one)."""
    for node in nodes:
        if node.type in ("heredoc_redirect", "herestring_redirect"):
            current = _HERE
        elif node.type == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), "")
            fd = node.child_by_field_name("descriptor")
            dest = node.child_by_field_name("destination")
            if op == "<" and dest is not None and (fd is None or fd.text == b"0"):
                current = _word(dest, data)
    return current


# -- words: quote removal -------------------------------------------------------------------

_GLOB = re.compile(r"[*?\[]")
_BRACES = re.compile(r"\{.*\}", re.S)
_ANSI = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)",
                   re.S)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _word(node: Node, data: bytes) -> Word:
    """The value of a word after quote removal; not literal if an expansion makes it."""
    pieces: list[tuple[str, bool]] = []  # (text, quoted)
    literal = _pieces(node, data, pieces)
    value = "".join(text for text, _ in pieces)
    unquoted = "".join(text if not quoted else "\0" * len(text) for text, quoted in pieces)
    if _GLOB.search(unquoted) or _BRACES.search(unquoted):
        literal = False
    if literal and unquoted.startswith("~"):
        head = value.split("/", 1)[0]
        if head == "~" or re.fullmatch(r"~[A-Za-z0-9._-]+", head):
            value = os.path.expanduser(head) + value[len(head):]
        else:
            literal = False  # ~+ ~- ~1: the directory stack
    source = data[node.start_byte : node.end_byte].decode(errors="replace")
    return Word(value, True) if literal else Word(source, False)


def _pieces(node: Node, data: bytes, out: list[tuple[str, bool]]) -> bool:
    kind = node.type
    raw = data[node.start_byte : node.end_byte].decode(errors="replace")
    if kind in EXPANSIONS:
        return False
    if kind in ("word", "number", "variable_name"):
        _unescape(raw, out)
        return True
    if kind == "raw_string":
        out.append((raw[1:-1], True))
        return True
    if kind == "ansi_c_string":
        out.append((_ansi_c(raw[2:-1]), True))
        return True
    if kind == "string":
        return _in_double_quotes(node, data, out)
    if kind == "translated_string":
        inner = [c for c in node.children if c.type == "string"]
        return bool(inner) and _in_double_quotes(inner[0], data, out)
    if kind in ("concatenation", "command_name"):
        ok, cursor = True, node.start_byte
        for child in node.children:
            if child.start_byte > cursor:  # text between pieces belongs to the word
                _unescape(data[cursor : child.start_byte].decode(), out)
            ok = _pieces(child, data, out) and ok
            cursor = child.end_byte
        if node.end_byte > cursor:
            _unescape(data[cursor : node.end_byte].decode(), out)
        return ok
    return False  # anything else (arrays, tests, ...) is not a plain word


def _unescape(raw: str, out: list[tuple[str, bool]]) -> None:
    """Unquoted text: a backslash quotes the next character."""
    if "\\" not in raw:
        out.append((raw, False))
        return
    i = 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw):
            out.append((raw[i + 1], True))
            i += 2
        else:
            out.append((raw[i], False))
            i += 1


def _in_double_quotes(node: Node, data: bytes, out: list[tuple[str, bool]]) -> bool:
    ok, cursor, end = True, node.start_byte + 1, node.end_byte - 1
    for child in node.children:
        if child.type in ('"', "string_content"):
            continue  # the quotes, and text read below from the gaps between expansions
        if child.start_byte > cursor:
            out.append((_dq(data[cursor : child.start_byte].decode()), True))
        ok = False  # an expansion inside the quotes
        cursor = child.end_byte
    if end > cursor:
        out.append((_dq(data[cursor : end].decode()), True))
    return ok


def _dq(raw: str) -> str:
    """Inside "..": a backslash quotes only $ ` " \\ and a newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), raw)


def _ansi_c(raw: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8))
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return _ANSI_SIMPLE.get(code, "\\" + code)

    return _ANSI.sub(one, raw)


# -- simple commands and the wrappers in front of them ----------------------------------------

def _command(node: Node, data: bytes, writes: tuple[Word, ...], depth: int,
             ev: Evaluation, stdin: Word | None) -> list[SimpleCommand]:
    text = _text(node, data)
    assigns = any(c.type == "variable_assignment" for c in node.children)
    writes = writes + _redirects(node.children_by_field_name("redirect"), data)
    stdin = _stdin(node.children_by_field_name("redirect"), data, stdin)
    name = node.child_by_field_name("name")
    if name is None:
        return [SimpleCommand(text, ((),), writes=writes, sets_variables=assigns)]
    argv = (_word(name, data), *(_word(a, data) for a in node.children_by_field_name("argument")))
    found = unwrap(argv)
    layers, opaque = found.layers, found.opaque
    for word in found.sets:  # env X=1, sudo X=1, strace -E X=1
        var, _, value = word.text.partition("=")
        ev.assign(var.rstrip("+"), value if word.literal else None)
    string: str | None = None
    if opaque is None:
        string, opaque = shell_string(layers[-1])
        ev.command(layers[-1])
    if opaque is None:
        opaque = rebinds(layers[-1])
    command = SimpleCommand(text, tuple(layers), found.allowable, writes + tuple(found.writes),
                            stdin, assigns or bool(found.sets), opaque,
                            runs_string=string is not None)
    commands = [command]
    if string is not None:
        _parse_into(string, commands, depth + 1, ev)
    return commands


def directories(commands: tuple[SimpleCommand, ...]) -> list[str] | None:
    """Where `cd`/`pushd` may move before a relative write: the literal targets in order; None
    when one is unknown (an expansion, `cd -`, `popd`)."""
    targets: list[str] = []
    for command in commands:
        if command.program not in CHANGES_DIR:
            continue
        args = [w for w in command.argv[1:] if not (w.literal and w.text.startswith("-")
                                                   and w.text != "-")]
        if command.program == "popd" or (args and (not args[0].literal or args[0].text == "-")):
            return None
        targets.append(args[0].text if args else os.path.expanduser("~"))
    return targets
