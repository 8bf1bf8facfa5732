"""Strings bash evaluates as code that are not commands: arithmetic, array subscripts and names.

Bash evaluates arithmetic in `$(( ))`, `$[ ]`, `(( ))`, `for (( ))`, `let`, the operands of
`[[ .. -eq .. ]]`, `${x:offset:length}`, values given to `declare -i` variables, and the
subscript of every indexed array element it names: `a[i]` in an assignment, `${a[i]}`, and a name
handed to `[[ -v ]]`, `test -v`, `printf -v`, `read`, `mapfile`, `declare`, `unset`, `wait -p`,
`getopts`. Inside arithmetic a subscript is arithmetic again and a `$(..)` in it runs: so
`[[ -v 'a[$(rm x)]' ]]` runs `rm x`, though tree-sitter sees only a quoted string. A variable's
value is evaluated the same way when arithmetic names it (`x='a[$(rm y)]'; echo $((x))`), and
every indirection (`${!x}`, `${!x[0]}`, `${!x:-d}`) and every transformation other than text
ones (`${x@P}` runs the `$(..)` of a prompt, `${x[0]@E}`, `${@@P}`) expands a value again.

`Evaluation` collects, over one whole command (its nested `bash -c`/`eval` strings too), the
arithmetic texts, subscripts and names bash evaluates, and what the command assigns to each
variable; `finish` says what makes the command opaque:
- arithmetic or a subscript with quotes, a backslash, `$(..)`/backticks, a positional parameter
  or an expansion other than `$x`, `${x}`, `${#x}`, `${x:-word}`: it may hold code;
- a variable whose value bash evaluates (above) and that the command gives a value that is not a
  plain number: from `read`, `read -a`, `mapfile`, `for`/`select x in ..`, `getopts`, `x=$(..)`,
  a `source`d file, any text, or bash itself (`PWD`, `OLDPWD`, `DIRSTACK` after `cd`, `pushd`,
  `popd`; `BASH_CMDS` and `BASH` from PATH); an indirection that is transformed too (`${!x@P}`);
- an assignment to a variable bash runs as code (`PS4`, `BASH_ENV`, ..), `compgen -C/-F/-W`,
  `fc` (reruns history), `enable -f`, `source` of a computed path or of input (`/dev/stdin`).
A variable the command does not set comes from swarm's environment and is taken as it is.
The subscript of an array the command declares associative (`declare -A h`) may hold quotes, not
`$`: should `h` not be associative when it runs, the text is arithmetic, so its names count.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec import Struct, field

from swarm.core.shell.words import Argv, Word, basename, from_input

if TYPE_CHECKING:
    from tree_sitter import Node

# Variables bash expands or runs as code (prompts, xtrace, the startup file of `bash -c`).
CODE_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV",
                            "ENV", "BASH_LOADABLES_PATH"})
# Set by bash from data (input, matches, options, history): their value is never known.
UNKNOWN_VARIABLES = frozenset({"REPLY", "MAPFILE", "BASH_REMATCH", "OPTARG", "_", "BASH_COMMAND",
                               "BASH_ARGV", "BASH_EXECUTION_STRING", "READLINE_LINE",
                               "COMP_LINE", "COMP_WORDS", "FUNCNAME", "BASH_SOURCE", "@", "*",
                               "-", "0", "BASH_CMDS", "BASH_ALIASES", "BASH", "BASH_ARGV0"})
NUMERIC_SPECIALS = frozenset({"#", "?", "$", "!"})
ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
DECLARES = frozenset({"declare", "typeset", "local", "readonly", "export"})
CHANGES_DIR = frozenset({"cd", "pushd", "popd"})
# An environment-style name (PATH, LD_PRELOAD, IFS): setting it changes what later words run.
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"\s*[-+]?\s*(?:0[xX][0-9a-fA-F]+|[0-9]+(?:#[0-9A-Za-z@_]+)?)?\s*\Z")
_TOKEN = re.compile(r"""
    (?P<space>\s+) | (?P<number>[0-9][\w#@]*) | (?P<name>[A-Za-z_]\w*)
  | (?P<nested>\$\(\(|\$\[) | (?P<param>\$\{[^{}]*\}) | (?P<var>\$(?:[A-Za-z_]\w*|[0-9#?$!@*_-]))
  | (?P<subst>\$\(|`) | (?P<quote>['"\\]) | (?P<op>[-+*/%<>=!&|^~?:,()\[\];]) | (?P<other>.)
""", re.X | re.S)
_PARAM = re.compile(r"\$\{(#?)([A-Za-z_]\w*|[0-9]+|[#?$!@*_-])(?:\[(.*)\])?(?::?[-=+](.*))?\}\Z",
                    re.S)
_SIMPLE_EXPANSION = re.compile(
    r"\$(?:\{([A-Za-z_]\w*|[0-9]+|[#?$!@*_-])\}|([A-Za-z_]\w*|[0-9#?$!@*_-]))\Z")


class Evaluation(Struct, dict=True):
    """What one command gives bash to evaluate beyond its commands (see the module doc)."""

    word: Callable[[Node, bytes], Word]  # a node's value after quote removal (shellparse)
    reasons: list[str] = field(default_factory=list)
    subscripts: list[tuple[str, str]] = field(default_factory=list)  # (array, index text)
    uses: set[str] = field(default_factory=set)  # names whose values bash evaluates
    values: dict[str, list[str | None]] = field(default_factory=dict)  # None: not known
    integers: set[str] = field(default_factory=set)  # declare -i: every value is arithmetic
    namerefs: set[str] = field(default_factory=set)  # declare -n: every value is a name
    associative: set[str] = field(default_factory=set)  # declare -A: subscripts are strings
    sets_any: bool = False  # `source file`, `read "$name"`: any variable may get any value
    sets_environment: bool = False  # read/printf -v/for set PATH, IFS, ...: what runs changes

    def opaque(self, why: str) -> None:
        if why not in self.reasons:
            self.reasons.append(why)

    # -- texts -----------------------------------------------------------------------------
    def arith(self, text: str) -> None:
        """Arithmetic source text, as bash reads it."""
        for match in _TOKEN.finditer(text):
            kind = match.lastgroup
            if kind in ("name", "var"):
                self.uses.add(match.group().lstrip("$"))
            elif kind == "param":
                self._param(match.group())
            elif kind == "subst":
                self.opaque("a command's output is evaluated as arithmetic")
            elif kind == "quote":
                self.opaque(f"quoted text in arithmetic is evaluated as code ({_short(text)})")
            elif kind == "other":
                self.opaque(f"arithmetic it cannot read ({_short(text)})")

    def _param(self, text: str) -> None:
        match = _PARAM.match(text)
        if match is None:
            self.opaque(f"an expansion in arithmetic is evaluated as code ({_short(text)})")
            return
        length, name, index, default = match.groups()
        if not length:
            self.uses.add(name)
        if index is not None and index not in ("@", "*"):
            self.arith(index)
        if default is not None:
            self.arith(default)

    def arith_word(self, word: Word) -> None:
        """A word bash expands, then evaluates as arithmetic (`let`, `[[ x -eq y ]]`)."""
        self.arith(word.text if word.literal else _unquoted(word.text))

    def name(self, word: Word) -> str | None:
        """A word bash takes as a variable name, maybe with a subscript: the name, if known."""
        if not word.literal:
            match = _SIMPLE_EXPANSION.match(_unquoted(word.text))
            if match is None:
                self.opaque(f"a variable name comes from an expansion ({_short(word.text)})")
                return None
            self.uses.add(match.group(1) or match.group(2))
            return None
        return self.name_text(word.text)

    def name_text(self, text: str) -> str | None:
        match = _NAME.match(text)
        if match is None:
            if re.search(r"[\[$`]", text):
                self.opaque(f"a variable name bash would evaluate ({_short(text)})")
            return None
        rest = text[match.end():]
        if rest.startswith("["):
            self.subscripts.append((match.group(), bracketed(rest)))
        elif rest:
            return None  # not a name: bash refuses it
        return match.group()

    def assign(self, name: str, value: str | None, by_builtin: bool = False) -> None:
        """The command gives `name` this value (None: not known, like `read`'s)."""
        if name in CODE_VARIABLES:
            self.opaque(f"it sets {name}, which bash expands as code")
        elif name.startswith("BASH_FUNC_"):
            self.opaque(f"it hands bash a function through the environment ({_short(name)})")
        self.values.setdefault(name, []).append(value)
        if by_builtin and _ENV_NAME.match(name):
            self.sets_environment = True

    def attributes(self, flags: str, name: str) -> None:
        """`declare -i/-n/-A name`: how bash reads the values and subscripts of `name`."""
        if "i" in flags:
            self.integers.add(name)
        if "n" in flags:
            self.namerefs.add(name)
        if "A" in flags:
            self.associative.add(name)

    def declare(self, program: str, flags: str, word: Word) -> None:
        """An argument of declare/local/export..: `name`, `name[sub]`, `name=value`."""
        if not word.literal:
            match = _NAME.match(word.text)
            if match is None or not word.text[match.end():].startswith(("=", "+=")):
                self.opaque(f"{program} of a name from an expansion ({_short(word.text)})")
                return
            self.attributes(flags, match.group())
            self.assign(match.group(), None, by_builtin=True)
            return
        head, eq, value = _split_assignment(word.text)
        name = self.name_text(head)
        if name is not None:
            self.attributes(flags, name)
            if eq:
                self.assign(name, value, by_builtin=True)

    # -- builtins ----------------------------------------------------------------------------
    def command(self, argv: Argv) -> None:
        """The builtins that evaluate their words: names, arithmetic, code."""
        if not argv or not argv[0].literal:
            return
        program, args = basename(argv[0].text), argv[1:]
        if program in ("test", "["):
            for i, word in enumerate(args[:-1]):
                if word.literal and word.text == "-v":
                    self.name(args[i + 1])
        elif program == "let":
            for word in args:
                self.arith_word(word)
        elif program in ("read", "mapfile", "readarray", "printf", "getopts", "wait"):
            self._reads(program, args)
        elif program == "unset":
            if not any(w.literal and w.text.startswith("-") and "f" in w.text for w in args):
                for word in args:
                    if not (word.literal and word.text.startswith("-")):
                        self.name(word)
        elif program in DECLARES:
            flags = "".join(w.text[1:] for w in args if w.literal and w.text[:1] == "-")
            for word in args:
                if not (word.literal and word.text[:1] in "-+"):
                    self.declare(program, flags, word)
        elif program in ("source", "."):
            args = args[1:] if args and args[0].literal and args[0].text == "--" else args
            if args and not args[0].literal:
                self.opaque(f"{program} of a computed path ({_short(args[0].text)})")
            elif args and from_input(args[0]):
                self.opaque(f"{program} reads code from input ({_short(args[0].text)})")
            self.sets_any = True
        elif program in CHANGES_DIR:  # bash sets these from the path: never swarm's values
            for name in ("PWD", "OLDPWD", "DIRSTACK"):
                self.assign(name, None)
        else:
            self._runs_code(program, args)

    def _reads(self, program: str, args: Argv) -> None:
        """Builtins that store into variables named by their words."""
        values, naming = {"read": ("adinNptu", "a"), "mapfile": ("dnOsuCc", ""),
                          "readarray": ("dnOsuCc", ""), "printf": ("v", "v"),
                          "getopts": ("", ""), "wait": ("p", "p")}[program]
        named: list[Word] = []
        i = 0
        while i < len(args) and args[i].literal and args[i].text.startswith("-") \
                and args[i].text != "-":
            text = args[i].text
            i += 1
            if text == "--":
                break
            for j, flag in enumerate(text[1:], 1):
                if flag in values:
                    value = Word(text[j + 1:]) if text[j + 1:] else args[i] if i < len(args) \
                        else None
                    i += 0 if text[j + 1:] else 1
                    if value is not None and flag in naming:
                        named.append(value)
                    break
        operands = args[i:]
        if program == "read":
            named += operands
        elif program in ("mapfile", "readarray"):
            named += operands[:1]
        elif program == "getopts":
            named += operands[1:2]
        elif program == "printf" and not named:
            return
        for word in named:
            name = self.name(word)
            if name is not None and program != "wait":
                self.assign(name, None, by_builtin=True)
            elif not word.literal:
                self.sets_any = True

    def _runs_code(self, program: str, args: Argv) -> None:
        flags = {c for w in args if w.literal and w.text[:1] == "-" for c in w.text[1:]}
        if program == "compgen" and (flags & {"C", "F", "W"}):
            self.opaque("compgen runs a command, a function or an expanded word list")
        elif program == "fc" and "l" not in flags:
            self.opaque("fc runs commands from the history")
        elif program == "enable" and "f" in flags:
            self.opaque("enable -f loads a builtin from a shared library")

    # -- the end -------------------------------------------------------------------------------
    def finish(self) -> list[str]:
        """Why the command is opaque (empty: nothing it evaluates can hold code)."""
        for name in self.namerefs:
            for value in self.values.get(name, []):
                if value is None:
                    self.opaque(f"a name reference gets a name that is not known (${name})")
                else:
                    self.name_text(value)
        for name in self.integers:
            for value in self.values.get(name, []):
                if value is None:
                    self.opaque(f"an integer variable gets a value bash evaluates (${name})")
                else:
                    self.arith(value)
        for array, index in self.subscripts:
            if index in ("@", "*"):
                continue
            if array in self.associative and not re.search(r"[$`\\]", index):
                # A string key; should the array not be associative when it runs (unset, or a
                # function's local), the same text is arithmetic without the quotes: names only.
                index = index.replace("'", " ").replace('"', " ")
            self.arith(index)
        for name in sorted(self.uses):
            why = self._unknown(name)
            if why:
                self.opaque(f"bash evaluates the value of ${name} as code, and {why}")
        return self.reasons

    def _unknown(self, name: str) -> str | None:
        if name in NUMERIC_SPECIALS:
            return None
        if name in UNKNOWN_VARIABLES or name.isdigit():
            return "it comes from input or arguments"
        values = self.values.get(name, [])
        if name not in self.integers and any(v is None or not _NUMBER.match(v) for v in values):
            return "the command gives it a value that is not a number"
        if self.sets_any:
            return "the command may set any variable (a sourced file, a computed name)"
        if self.namerefs:
            return "a name reference may give it any value"
        return None


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _unquoted(source: str) -> str:
    """A word's source without the double quotes around all of it (`"$x"` is `$x`)."""
    if len(source) >= 2 and source[0] == source[-1] == '"' and '"' not in source[1:-1]:
        return source[1:-1]
    return source


def bracketed(rest: str) -> str:
    """The text inside `[..]` at the start of `rest` (brackets nest)."""
    depth = 0
    for i, char in enumerate(rest):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0:
            return rest[1:i]
    return rest[1:]


def _split_assignment(text: str) -> tuple[str, str, str]:
    """`name[sub]+=value` -> (`name[sub]`, `=`, `value`): the `=` outside the brackets."""
    depth = 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "=" and depth == 0:
            return text[:i].rstrip("+"), "=", text[i + 1:]
    return text, "", ""
