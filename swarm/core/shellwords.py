"""What the words of a simple command run: wrappers looked through, shell strings found.

Pure functions on words (after quote removal, see `shellparse`): `unwrap` peels `sudo env nice
rm x` into layers (`sudo ..`, `env ..`, `nice ..`, `rm x`), with the files `tee`, `time -o` and
the targets of `cp`/`mv`/`ln` write; `shell_string` finds the code `bash -c` (any shell),
`eval`, `trap` and `mapfile -C` run. `--` ends the options of each.
"""

from __future__ import annotations

import re

from msgspec import Struct

# Shells whose -c string is bash's language (near enough to read its commands).
SHELLS = frozenset({"sh", "bash", "rbash", "dash", "ash", "ksh", "mksh", "lksh", "pdksh", "oksh",
                    "posh", "yash", "zsh"})
# Shells with another language: their string is read for deny rules, but never allowed.
OTHER_SHELLS = frozenset({"fish", "csh", "tcsh"})
# cp, mv, ln: the options that take a value (the target directory among them).
_COPIES = {"cp": "tS", "mv": "tS", "ln": "tS"}
_COPY_LONG = frozenset({"--target-directory", "--suffix"})


class Word(Struct, frozen=True):
    text: str
    literal: bool = True  # False: its value comes from an expansion (then text is the source)


Argv = tuple[Word, ...]


def basename(program: str) -> str:
    return program.rstrip("/").rsplit("/", 1)[-1] or program


class _Wrapper(Struct, frozen=True):
    short_values: str = ""  # short options that take a value (attached or the next word)
    long_values: frozenset[str] = frozenset()  # long options that take the next word
    transparent: bool = True  # False: an allow rule must name it (it runs as someone else)
    positional: int = 0  # words between the options and the command (timeout's duration)
    assignments: bool = False  # NAME=value words may come before the command
    stop_flags: str = ""  # short flags with which it runs nothing (command -v, sudo -l)


WRAPPERS: dict[str, _Wrapper] = {
    "command": _Wrapper(stop_flags="vV"),
    "builtin": _Wrapper(),
    "env": _Wrapper("uCS", frozenset({"--unset", "--chdir", "--split-string"}), assignments=True),
    "exec": _Wrapper("a"),
    "nice": _Wrapper("n", frozenset({"--adjustment"})),
    "nohup": _Wrapper(),
    "time": _Wrapper("fo", frozenset({"--format", "--output"})),
    "timeout": _Wrapper("sk", frozenset({"--signal", "--kill-after"}), positional=1),
    "xargs": _Wrapper("adEILnPs", frozenset({"--arg-file", "--delimiter", "--max-args",
                                             "--max-procs", "--max-chars", "--process-slot-var"})),
    "sudo": _Wrapper("CDghpRrTtUu", frozenset({"--user", "--group", "--close-from", "--chdir",
                                               "--host", "--prompt", "--role", "--type",
                                               "--command-timeout", "--other-user"}),
                     transparent=False, assignments=True, stop_flags="elvKV"),
    "coproc": _Wrapper(transparent=False),
    # Not in SPEC's list, as simple to look through:
    "setsid": _Wrapper(),
    "stdbuf": _Wrapper("ioe", frozenset({"--input", "--output", "--error"})),
    "ionice": _Wrapper("cnp", frozenset({"--class", "--classdata", "--pid"})),
    "doas": _Wrapper("uC", transparent=False, stop_flags="s"),
    "busybox": _Wrapper(transparent=False),
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=", re.S)
_STDIN_ARGS = Word("<arguments from stdin>", literal=False)


def unwrap(argv: Argv) -> tuple[list[Argv], int, list[Word], list[Word], str | None]:
    """Look through wrappers: (layers, allowable, writes, assignments (`env X=1`), opaque)."""
    layers: list[Argv] = [argv]
    writes: list[Word] = []
    sets: list[Word] = []
    allowable, transparent = 1, True
    while True:
        current = layers[-1]
        if not current[0].literal:
            return layers, allowable, writes, sets, (
                f"its program comes from an expansion ({current[0].text})")
        program = basename(current[0].text)
        spec = WRAPPERS.get(program)
        if spec is None:
            if program == "tee":
                writes.extend(_tee_files(current[1:]))
            elif program in _COPIES:
                writes.extend(_copy_target(current[1:], _COPIES[program], program == "ln"))
            return layers, allowable, writes, sets, None
        skipped = _skip_options(spec, current[1:])
        if skipped is None:
            return layers, allowable, writes, sets, f"the options of {program} come from an expansion"
        options, inner, assigned = skipped
        names = {name for name, _ in options}
        sets.extend(assigned)
        if names & {"-S", "--split-string"}:
            return layers, allowable, writes, sets, f"{program} -S splits a string into a command"
        if program == "time":
            writes.extend(v for n, v in options if n in ("-o", "--output") and v is not None)
        if any(n[1:] in spec.stop_flags for n in names if len(n) == 2) or not inner:
            if program == "xargs":  # xargs alone runs echo
                inner = (Word("echo"),)
            else:
                return layers, allowable, writes, sets, None
        if program == "xargs":
            if names & {"-I", "-i", "--replace"}:  # the input is spliced into the words
                inner = (inner[0], *(Word(w.text, False) for w in inner[1:]))
            inner = (*inner, _STDIN_ARGS)
        transparent = transparent and spec.transparent
        layers.append(inner)
        allowable += transparent


def _skip_options(spec: _Wrapper, words: Argv) -> tuple[list[tuple[str, Word | None]], Argv,
                                                         list[Word]] | None:
    """(options with their values, the wrapped argv, the NAME=value words before it)."""
    options: list[tuple[str, Word | None]] = []
    i = 0
    while i < len(words):
        word, text = words[i], words[i].text
        following = words[i + 1] if i + 1 < len(words) else None
        if not word.literal and text.startswith("-"):
            return None
        if text == "--":
            i += 1
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            takes_next = name in spec.long_values and not eq
            options.append((name, following if takes_next else Word(value) if eq else None))
            i += 2 if takes_next else 1
            continue
        if text.startswith("-") and len(text) > 1 or text == "-" and spec.assignments:
            i += 1
            for j, flag in enumerate(text[1:], 1):
                if flag in spec.short_values:
                    attached = text[j + 1:]
                    options.append(("-" + flag, Word(attached) if attached else following))
                    i += 0 if attached else 1
                    break
                options.append(("-" + flag, None))
            continue
        break
    rest = words[i:]
    assigned: list[Word] = []
    while spec.assignments and rest and _ASSIGNMENT.match(rest[0].text):
        assigned.append(rest[0])
        rest = rest[1:]
    return options, rest[spec.positional:], assigned


def _tee_files(args: Argv) -> list[Word]:
    files, options_done = [], False
    for word in args:
        if not options_done and word.literal and word.text == "--":
            options_done = True
        elif not options_done and word.literal and word.text.startswith("-") and word.text != "-":
            continue
        else:
            files.append(word)
    return files


def _copy_target(args: Argv, short_values: str, link: bool) -> list[Word]:
    """Where `cp`/`mv`/`ln` write: the -t directory, else the last operand (`ln -s x`: ./x)."""
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
