"""What a Bash command gives a new name to: the sources of `mv`, `rename`, `ln`,
`link`, `cp` with links (-l, -s) or a tree (-a, -r: a copied `.git` is a working git directory)
and `rsync` (and its --link-dest); and the targets of `rsync`, `install` and `link`, which
`shellparse` does not list as writes. A protected source is a protected write: `cp -l
.git/config cfg` or `mv .git g` gives git's config a name no protected-path check would see, and
`ln -s .git g && echo x > g/config` writes there through a link the check could not resolve yet.

A word whose value is not known (an expansion; a glob that may match a protected name or a file
named like an option) makes the command unknown: it may name a protected path or add `-l`.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from functools import lru_cache
from pathlib import Path

from msgspec import Struct

from swarm.core.shell.parse import SimpleCommand, Word
from swarm.core.shell.protected import absolute, protected_names

# Per program: the short options that take a value, the long ones that take the next word.
_COMMON_LONG = frozenset({"--target-directory", "--suffix"})
_OPTIONS: dict[str, tuple[str, frozenset[str]]] = {
    "cp": ("tS", _COMMON_LONG), "mv": ("tS", _COMMON_LONG), "ln": ("tS", _COMMON_LONG),
    "install": ("tSmog", _COMMON_LONG | {"--mode", "--owner", "--group", "--strip-program"}),
    "link": ("", frozenset()),  # link FILE1 FILE2: a hard link
    "rename": ("e", frozenset()),  # util-linux `rename FROM TO FILE..`, perl `rename EXPR FILE..`
    "rsync": ("eBfTM", frozenset({
        "--rsh", "--filter", "--exclude", "--include", "--exclude-from", "--include-from",
        "--files-from", "--link-dest", "--copy-dest", "--compare-dest", "--backup-dir",
        "--suffix", "--temp-dir", "--partial-dir", "--log-file", "--log-file-format", "--chmod",
        "--chown", "--usermap", "--groupmap", "--block-size", "--max-size", "--min-size",
        "--timeout", "--contimeout", "--port", "--password-file", "--out-format", "--rsync-path",
        "--bwlimit", "--info", "--debug", "--iconv", "--remote-option", "--max-delete",
        "--modify-window", "--write-batch", "--read-batch", "--only-write-batch"})),
}
_CP_ALIASES = frozenset({"-l", "-s", "-a", "-r", "-R", "--link", "--symbolic-link", "--archive",
                         "--recursive"})
_LONG_FLAGS = frozenset({"--link", "--symbolic-link", "--archive", "--recursive", "--symbolic",
                         "--directory"})
_RSYNC_SOURCES = frozenset({"--link-dest", "--copy-dest", "--compare-dest"})
_NOT_A_GLOB = frozenset("$`{'\"\\~")


class Operands(Struct, frozen=True):
    sources: tuple[Word, ...]
    targets: tuple[Word, ...]
    options: frozenset[str]
    values: tuple[tuple[str, Word], ...]  # (option, its value)


@lru_cache(maxsize=512)
def operands(command: SimpleCommand) -> Operands | None:
    """The sources and targets of a copy, link or move command; None for other programs."""
    program = command.program
    if program not in _OPTIONS:
        return None
    short_values, long_values = _OPTIONS[program]
    args = command.argv[1:]
    names: set[str] = set()
    values: list[tuple[str, Word]] = []
    plain: list[Word] = []
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        following = args[i + 1] if i + 1 < len(args) else None
        if not word.literal or not text.startswith("-") or text == "-":
            plain.append(word)
        elif text == "--":
            plain.extend(args[i + 1:])
            break
        elif text.startswith("--"):
            name, eq, value = text.partition("=")
            meant = _long_names(name, long_values)
            names |= meant
            if eq:
                values += [(n, Word(value)) for n in meant]
            elif meant & long_values and following is not None:
                values += [(n, following) for n in meant]
                i += 1
        else:
            for j, flag in enumerate(text[1:], 1):
                names.add("-" + flag)
                if flag in short_values:
                    given = Word(text[j + 1:]) if text[j + 1:] else following
                    i += 0 if text[j + 1:] else 1
                    if given is not None:
                        values.append(("-" + flag, given))
                    break
        i += 1
    if program == "rename":  # every word may be a name it moves or makes
        return Operands(tuple(plain), (), frozenset(names), tuple(values))
    directory = [w for n, w in values if n in ("-t", "--target-directory")]
    if directory:
        return Operands(tuple(plain), tuple(directory), frozenset(names), tuple(values))
    if program == "install" and names & {"-d", "--directory"}:
        return Operands((), tuple(plain), frozenset(names), tuple(values))
    if len(plain) == 1 and program == "ln":  # `ln -s /x/y`: the link ./y
        return Operands(tuple(plain), (), frozenset(names), tuple(values))
    return Operands(tuple(plain[:-1]), tuple(plain[-1:]), frozenset(names), tuple(values))


def _long_names(name: str, long_values: frozenset[str]) -> set[str]:
    """What a long option may be: getopt takes any unambiguous prefix (`--lin` is `--link`,
    `--target=d` is `--target-directory=d`)."""
    if name in long_values or name in _LONG_FLAGS:
        return {name}
    return {name} | {k for k in long_values | _LONG_FLAGS if k.startswith(name)}


def aliased(command: SimpleCommand, found: Operands) -> list[Word]:
    """The words naming what the command moves, links or copies as a tree."""
    program = command.program
    if program == "cp" and not found.options & _CP_ALIASES:
        return []
    if program == "install":
        return []
    extra = [w for n, w in found.values if n in _RSYNC_SOURCES] if program == "rsync" else []
    return [*found.sources, *extra]


def extra_targets(command: SimpleCommand) -> list[Word]:
    """The files rsync and install write, which `shellparse` does not list (and a cp, mv or ln
    target given as an abbreviated option, `--target=DIR`)."""
    found = operands(command)
    if found is None:
        return []
    spill = [w for n, w in found.values if n in ("--backup-dir", "--temp-dir", "--partial-dir",
                                                  "--log-file", "-T")]
    return [*found.targets, *spill]


class LinkSource(Struct, frozen=True):
    word: Word  # as written
    path: Path  # one place it may name
    moved: bool  # mv: the source itself changes (a write where it is)


def sources(commands: tuple[SimpleCommand, ...], bases: list[Path],
            known: bool) -> tuple[list[LinkSource], Word | None]:
    """(every place a command moves, links or copies as a tree, from each directory a `cd` may
    move to (`known`: else `bases` is the cwd alone); the first word of such a command whose
    value is not known, or None)."""
    dotglob = dot_globs(commands)
    found: list[LinkSource] = []
    unknown: Word | None = None
    for command in commands:
        parsed = operands(command)
        if parsed is None:
            continue
        named = aliased(command, parsed)
        unknown = unknown or next((w for w in command.argv[1:] if not w.literal and (
            w not in parsed.sources or glob_paths(w, bases, dotglob) is None)), None)
        starts = list(bases)
        if command.program == "ln" and parsed.options & {"-s", "--symbolic"}:
            starts += _link_dirs(parsed, bases)  # a relative target is read from there
        for word in named:
            if not known and not os.path.isabs(os.path.expanduser(word.text)):
                unknown = unknown or word  # after a cd to where?
            paths = [absolute(word.text, base) for base in starts] if word.literal else \
                glob_paths(word, starts, dotglob) or []
            moved = command.program in ("mv", "rename")
            found += [LinkSource(word, p, moved) for p in dict.fromkeys(paths)]
    return found, unknown


def dot_globs(commands: tuple[SimpleCommand, ...]) -> bool:
    """May `*` match `.git` here (`shopt -s dotglob`, GLOBIGNORE)?"""
    return any(c.program == "shopt" or "GLOBIGNORE" in c.text for c in commands)


def _link_dirs(parsed: Operands, bases: list[Path]) -> list[Path]:
    """Where a symlink's relative target is resolved: the link's directory."""
    out: list[Path] = []
    for target in parsed.targets:
        if target.literal:
            for base in bases:
                place = absolute(target.text, base)
                out += [place, place.parent]
    return out


def glob_paths(word: Word, bases: list[Path], dotglob: bool) -> list[Path] | None:
    """What a glob word may expand to: the matches now and the protected names it matches; None
    when it is not known (an expansion, quotes, braces, a match named like an option)."""
    text = word.text
    if _NOT_A_GLOB & set(text):
        return None
    parts = text.split("/")
    # the protected dot names it may match by the time it runs (`.gi?` once `.git` is there;
    # the others, `CLAUDE.md`, only as the matches found now: `src/*` would name them all)
    folders, files = protected_names()
    named = ["/".join([*parts[:i], name, *parts[i + 1:]]) for i, part in enumerate(parts)
             for name in folders | files
             if name.startswith(".") and (part.startswith(".") or dotglob)
             and fnmatch.fnmatchcase(name, part.casefold())]
    found: list[Path] = []
    for base in bases:
        pattern = str(absolute(text, base))
        for match in glob.glob(pattern, include_hidden=dotglob):
            if os.path.basename(match).startswith("-") and "/" not in text:
                return None  # `cp * x` with a file named `-l`: an option
            found.append(Path(match))
        found += [absolute(n, base) for n in named]
    return found
