"""A program's options and operands as getopt reads them, for the programs that write files
(`editors`, `extractors`): short bundles (`-xzf a.tar`), a value attached or in the next word,
long options by any unambiguous prefix (`--in` is `--in-place`), `--` ends the options, and GNU's
order (options after operands too) unless the program stops at its first operand.

A word from an expansion where an option may be (`$OPT`, `"$X"p`: it may start with `-`) is
`unsure`: the program may be told to write anything by it.
"""

from __future__ import annotations

from msgspec import Struct

from swarm.core.shell.words import Argv, Word

_NO: frozenset[str] = frozenset()


class Spec(Struct, frozen=True):
    short_values: str = ""  # short options that take a value, attached or the next word
    short_optional: str = ""  # short options whose value is only attached (sed -i.bak)
    long_values: frozenset[str] = _NO  # long options that take `=value` or the next word
    long_optional: frozenset[str] = _NO  # long options that take a value only after `=`
    long_flags: frozenset[str] = _NO  # long options without a value (for prefixes)
    permute: bool = True  # GNU getopt: options after operands count too


class Scanned(Struct):
    options: list[tuple[str, Word | None]]
    operands: list[Word]
    unsure: Word | None = None  # a word from an expansion that may be an option

    def names(self) -> set[str]:
        return {name for name, _ in self.options}

    def values(self, *names: str) -> list[Word]:
        return [v for n, v in self.options if n in names and v is not None]


def may_be_option(word: Word) -> bool:
    """A word from an expansion that may start with `-` once expanded."""
    return not word.literal and word.text.lstrip("\"'")[:1] in ("$", "`", "-", "*", "?", "[")


def long_name(name: str, spec: Spec) -> str:
    """The long option getopt takes `name` for (an unambiguous prefix), else `name` itself."""
    known = spec.long_values | spec.long_optional | spec.long_flags
    if name in known:
        return name
    matches = [k for k in known if k.startswith(name)]
    return matches[0] if len(matches) == 1 else name


def scan(args: Argv, spec: Spec) -> Scanned:
    found = Scanned([], [])
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        following = args[i + 1] if i + 1 < len(args) else None
        if may_be_option(word):
            found.unsure = found.unsure or word
        if not word.literal or not text.startswith("-") or text == "-":
            found.operands.append(word)
            if not spec.permute:
                found.operands.extend(args[i + 1:])
                return found
        elif text == "--":
            found.operands.extend(args[i + 1:])
            return found
        elif text.startswith("--"):
            raw, eq, value = text.partition("=")
            name = long_name(raw, spec)
            if eq:
                found.options.append((name, Word(value)))
            elif name in spec.long_values and following is not None:
                found.options.append((name, following))
                i += 1
            else:
                found.options.append((name, None))
        else:
            i += _bundle(text, following, spec, found)
        i += 1
    return found


def _bundle(text: str, following: Word | None, spec: Spec, found: Scanned) -> int:
    """Read `-abc` into found.options; 1 when it took the next word as a value, else 0."""
    for j, flag in enumerate(text[1:], 1):
        attached = text[j + 1:]
        if flag in spec.short_optional:
            found.options.append(("-" + flag, Word(attached) if attached else None))
            return 0
        if flag in spec.short_values:
            found.options.append(("-" + flag, Word(attached) if attached else following))
            return 0 if attached else 1
        found.options.append(("-" + flag, None))
    return 0
