"""Where a Bash command writes, for the rules: every target from every directory a `cd` may
move to; the first one outside the working directory (an allow rule never covers it); the ones
in protected paths (`protected`). Targets: redirections, `tee`, `time -o`, `cp`/`mv`/`ln`
(`shellparse`), `rsync` and `install` (`bashlinks`), in-place editors and extractors (`sed -i`,
`dd of=`, `tar -x`, `patch`, ...: `editors`); /dev/null and the standard streams are harmless. What `mv`, `ln`, `cp -l/-s/-a/-r` and `rsync` move or give a new name to counts as a
write where it is (`bashlinks.sources`): a protected one is a protected write, a moved one
outside the cwd a write outside, an unknown one (an expansion) not known."""

from __future__ import annotations

import os
from pathlib import Path

from swarm.core.shell import editors
from swarm.core.shell import links as bashlinks
from swarm.core.shell import parse as shellparse
from swarm.core.shell.parse import SimpleCommand, Word
from swarm.core.shell.protected import absolute, inside, is_protected

HARMLESS_WRITES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1",
                             "/dev/fd/2"})


def _bases(commands: tuple[SimpleCommand, ...], cwd: Path) -> list[Path] | None:
    """Every directory a relative write may start from (a literal `cd` moves); None: unknown."""
    moves = shellparse.directories(commands)
    if moves is None:
        return None
    bases, here = [cwd], cwd
    for target in moves:
        here = absolute(target, here)
        bases += [here, absolute(target, cwd)]
    return bases


def command_writes(command: SimpleCommand, bases: list[Path]) -> list[Word]:
    """The files one command writes: its redirections, copy and link targets, and what its
    program writes by its operands (from each of `bases`, for a file it reads to know)."""
    return [*command.writes, *bashlinks.extra_targets(command), *editors.targets(command, bases)]


def _writes(commands: tuple[SimpleCommand, ...], bases: list[Path]) -> list[Word]:
    """Each write target once, but the harmless ones (/dev/null)."""
    return [w for w in dict.fromkeys(w for c in commands for w in command_writes(c, bases))
            if not (w.literal and w.text in HARMLESS_WRITES)]


def writes_outside(commands: tuple[SimpleCommand, ...], cwd: Path) -> str | None:
    """Where the first write an allow rule may not cover goes (`outside the working directory:
    X`, or `to a file not known: X`), or None."""
    bases = _bases(commands, cwd)
    outside = "outside the working directory: "
    for word in _writes(commands, bases or [cwd]):
        if not word.literal:
            return f"to a file not known: {word.text}"
        relative = not os.path.isabs(os.path.expanduser(word.text))
        if relative and bases is None:
            return f"{outside}{word.text} (after a cd to where?)"
        for base in (bases or [cwd]) if relative else [cwd]:
            if not inside(absolute(word.text, base), cwd):
                return outside + word.text
    found, unknown = bashlinks.sources(commands, bases or [cwd], bases is not None)
    if unknown is not None:
        return (f"{outside}{unknown.text} (what it links or moves is not known: it may be a"
                " protected path)")
    moved = next((s.word.text for s in found if s.moved and not inside(s.path, cwd)), None)
    return None if moved is None else outside + moved


def protected_writes(commands: tuple[SimpleCommand, ...], cwd: Path) -> list[tuple[Word, Path]]:
    """The writes that land in a protected path (from any directory a `cd` may move to)."""
    known = _bases(commands, cwd)
    bases = known or [cwd]
    found: list[tuple[Word, Path]] = []
    dotglob = bashlinks.dot_globs(commands)
    for word in _writes(commands, bases):  # a glob: what it matches now or may (`.gi?`: `.git`)
        paths = [absolute(word.text, base) for base in bases] if word.literal else \
            bashlinks.glob_paths(word, bases, dotglob) or []
        found += [(word, path) for path in dict.fromkeys(paths) if is_protected(path, cwd)]
    sources, _ = bashlinks.sources(commands, bases, known is not None)
    for source in sources:  # another name for a hard-linked file adds none that matters
        if is_protected(source.path, cwd, links=False):
            verb = "moves" if source.moved else "links or copies"
            found.append((Word(f"{source.word.text} (the command {verb} it)"), source.path))
    return found
