"""What the words of a simple command run: shell strings found, files written.

Pure functions on words (after quote removal, see `shellparse`; wrappers: `shellwrappers`):
`shell_string` finds the code `bash -c` (any shell), `eval`, `trap` and `mapfile -C` run, and
tells when a shell reads its commands from its input (`sh`, `bash -s`, `bash /dev/stdin`, `bash
<(..)`); `tee_files` and `copy_target` the files `tee` and `cp`/`mv`/`ln` write. `--` ends the
options of each.
"""

from __future__ import annotations

import os
import re

from msgspec import Struct

# Shells whose -c string is bash's language (near enough to read its commands).
SHELLS = frozenset({"sh", "bash", "rbash", "dash", "ash", "ksh", "mksh", "lksh", "pdksh", "oksh",
                    "posh", "yash", "zsh"})
# Shells with another language: their string is read for deny rules, but never allowed.
OTHER_SHELLS = frozenset({"fish", "csh", "tcsh"})
# cp, mv, ln: the long options that take a value.
_COPY_LONG = frozenset({"--target-directory", "--suffix"})


class Word(Struct, frozen=True):
    text: str
    literal: bool = True  # False: its value comes from an expansion (then text is the source)


Argv = tuple[Word, ...]


def basename(program: str) -> str:
    return program.rstrip("/").rsplit("/", 1)[-1] or program


def tee_files(args: Argv) -> list[Word]:
    files, options_done = [], False
    for word in args:
        if not options_done and word.literal and word.text == "--":
            options_done = True
        elif not options_done and word.literal and word.text.startswith("-") and word.text != "-":
            continue
        else:
            files.append(word)
    return files


def copy_target(args: Argv, link: bool) -> list[Word]:
    """Where `cp`/`mv`/`ln` write: the -t directory, else the last operand (`ln -s x`: ./x)."""
    short_values = "tS"  # the options that take a value (the target directory among them)
    operands: list[Word] = []
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        if not word.literal and text.startswith("-"):
            return [Word(text, False)]  # an option from an expansion: may be -t anywhere
        if text == "--":
            operands.extend(args[i + 1:])
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if name in _COPY_LONG:
                target = Word(value) if eq else args[i + 1] if i + 1 < len(args) else None
                if name == "--target-directory" and target is not None:
                    return [target]
                i += 1 if eq else 2
                continue
        elif text.startswith("-") and len(text) > 1:
            flags = text[1:]
            cut = next((j for j, f in enumerate(flags) if f in short_values), None)
            if cut is not None:
                attached = flags[cut + 1:]
                target = Word(attached) if attached else args[i + 1] if i + 1 < len(args) else None
                if flags[cut] == "t" and target is not None:
                    return [target]
                i += 1 if attached else 2
                continue
        else:
            operands.append(word)
        i += 1
    if len(operands) >= 2:
        return [operands[-1]]
    if link and operands:  # `ln -s /x/y`: the link ./y
        only = operands[0]
        return [Word(basename(only.text), only.literal)]
    return []


# The files that are a process's input (/dev/stdin is /proc/self/fd/0), from / or from any `..`.
_INPUT_FILES = re.compile(r"(?:\A|/)(?:dev/(?:stdin|tty|fd/.*)|proc/[^/]+/(?:task/[^/]+/)?fd/.*)\Z",
                          re.S)


def from_input(word: Word) -> bool:
    """Is this script path input (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`, `<(..)`) or
    made by an expansion? The code it holds cannot be read."""
    return not word.literal or bool(_INPUT_FILES.search(os.path.normpath(word.text)))


def _after_dashdash(args: Argv) -> Argv:
    return args[1:] if args and args[0].literal and args[0].text == "--" else args


def shell_string(argv: Argv) -> tuple[str | None, str | None]:
    """The string a command runs as shell code (bash -c, eval, trap, mapfile -C), or why it is
    unknown. Both for a shell whose language is not bash's: its string is read, and opaque."""
    program = basename(argv[0].text) if argv and argv[0].literal else ""
    args = argv[1:]
    chosen: Word | None = None
    if program == "eval" and _after_dashdash(args):
        args = _after_dashdash(args)
        if not all(w.literal for w in args):
            return None, "eval runs a string built from an expansion"
        return " ".join(w.text for w in args), None
    if program == "trap":
        args = _after_dashdash(args)
        if len(args) >= 2 and not (args[0].literal and args[0].text.startswith("-")):
            chosen = args[0]
    elif program in ("mapfile", "readarray"):
        chosen = _callback(args)
    elif program in SHELLS or program in OTHER_SHELLS:
        has_c, i = False, 0
        while i < len(args):
            word, text = args[i], args[i].text
            if not word.literal:
                break
            if text in ("--", "-"):
                i += 1
                break
            if text in ("--rcfile", "--init-file") or (text[:1] in "-+" and len(text) > 1
                                                       and text[1:2] != "-" and
                                                       ("o" in text or "O" in text)):
                has_c = has_c or (text[0] == "-" and "c" in text[1:])
                i += 2
                continue
            if text[:1] in "-+" and len(text) > 1:
                has_c = has_c or (text[0] == "-" and text[1] != "-" and "c" in text[1:])
                i += 1
                continue
            break
        if has_c and i < len(args):
            chosen = args[i]
        elif not has_c and (i >= len(args) or any(
                w.literal and w.text[:1] == "-" and "s" in w.text[1:] for w in args[:i])):
            return None, f"{program} reads the commands to run from its input"
        elif not has_c and from_input(args[i]):
            return None, f"{program} runs a script read from input or built by an expansion " \
                f"({args[i].text})"
    if chosen is None:
        return None, None
    if not chosen.literal:
        return None, f"{program} runs a string built from an expansion ({chosen.text})"
    if program in OTHER_SHELLS:
        return chosen.text, f"{program} runs a string in a language other than bash's"
    return chosen.text, None


def _callback(args: Argv) -> Word | None:
    """`mapfile -C CODE`: bash runs CODE every -c lines."""
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        if not word.literal and text.startswith("-"):
            return Word(text, False)  # an option from an expansion: it may be -C
        if not text.startswith("-") or text == "--":
            return None
        i += 1
        for j, flag in enumerate(text[1:], 1):
            if flag in "dnOsuCc":  # takes a value: the rest of the word, or the next word
                value = Word(text[j + 1:]) if text[j + 1:] else args[i] if i < len(args) else None
                i += 0 if text[j + 1:] else 1
                if flag == "C":
                    return value
                break
    return None


def rebinds(argv: Argv) -> str | None:
    """`alias x=rm` and `hash -p /bin/rm x` make a later `x` run something else."""
    program = basename(argv[0].text) if argv and argv[0].literal else ""
    if program == "alias" and any("=" in w.text for w in argv[1:]):
        return "it defines an alias, so later words may run something else"
    if program == "hash" and any(w.text.startswith("-") and "p" in w.text for w in argv[1:]):
        return "hash -p rebinds a command name"
    return None
