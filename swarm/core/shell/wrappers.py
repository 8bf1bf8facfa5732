"""Wrappers: programs that run a command given in their words, looked through layer by layer.

`unwrap` peels `sudo env nice rm x` into layers (`sudo ..`, `env ..`, `nice ..`, `rm x`); `--`
ends the options of each. A wrapper that runs its command as another user or in another root
(`sudo`, `su`, `chroot`, `nsenter`, ...) is not transparent: an allow rule must name it. A
wrapper that hands its command to `sh -c` (`su -c`, `flock FILE -c`, `watch`, `sg`, `script -c`)
gets an `sh -c STRING` layer, whose string is parsed like any other. One that, given no command,
runs a shell reading its input (`su`, `chroot DIR`, `sudo -s`, ...), or that builds commands from
its arguments and input (`parallel`), makes the command opaque. Writes found on the way: `tee`
and `cp`/`mv`/`ln` targets, `time -o`, `strace -o`, `script`'s typescript, `flock`'s lock file.
`find -exec`/`-execdir`/`-ok` is looked through the same way: what it runs is one layer, its `{}`
a word from an expansion (the files found); `find -fprint FILE` writes FILE.
"""

from __future__ import annotations

import re

from msgspec import Struct

from swarm.core.shell.words import Argv, Word, basename, copy_target, tee_files

_NO: frozenset[str] = frozenset()


class _Wrapper(Struct, frozen=True):
    short_values: str = ""  # short options that take a value (attached or the next word)
    long_values: frozenset[str] = _NO  # long options that take the next word
    transparent: bool = True  # False: an allow rule must name it (it runs as someone else)
    positional: int = 0  # words between the options and the command (timeout's duration)
    assignments: bool = False  # NAME=value words may come before the command
    stop_flags: str = ""  # short flags with which it runs nothing (command -v, sudo -l)
    optional_values: str = ""  # short options whose value is only attached (nsenter -m/x)
    outputs: frozenset[str] = _NO  # options whose value is a file it writes
    environment: frozenset[str] = _NO  # options whose value is NAME=value for the command
    bare_shell: bool = False  # without a command it runs a shell reading its input
    shell_flags: str = ""  # flags that run a shell: without a command, it reads its input
    joins: bool = False  # the command's words are joined into a string for sh -c (watch)
    exec_flags: frozenset[str] = _NO  # ... except with one of these (watch -x)
    string_after: frozenset[str] = _NO  # after the positional: `-c STRING` (flock, sg)
    positional_first: bool = False  # the positional comes before the options (setarch)
    optional_positional: str = ""  # a regex: the positional is there only if it matches
    lone_dash: bool = False  # `-` is an option (su -, sg -)
    writes_positional: bool = False  # the positional is a file it creates (flock's lock)
    opaque: str = ""  # it builds its commands from its arguments or input


_RUN_AS = frozenset({"--command", "--session-command", "--group", "--supp-group", "--shell",
                     "--whitelist-environment", "--user", "-c", "-g", "-G", "-s", "-w", "-u"})
WRAPPERS: dict[str, _Wrapper] = {
    "command": _Wrapper(stop_flags="vV"),
    "builtin": _Wrapper(),
    "env": _Wrapper("uCS", frozenset({"--unset", "--chdir", "--split-string"}), assignments=True),
    "exec": _Wrapper("a"),
    "nice": _Wrapper("n", frozenset({"--adjustment"})),
    "nohup": _Wrapper(),
    "time": _Wrapper("fo", frozenset({"--format", "--output"}),
                     outputs=frozenset({"-o", "--output"})),
    "timeout": _Wrapper("sk", frozenset({"--signal", "--kill-after"}), positional=1),
    "xargs": _Wrapper("adEILnPs", frozenset({"--arg-file", "--delimiter", "--max-args",
                                             "--max-procs", "--max-chars", "--process-slot-var"})),
    "sudo": _Wrapper("CDghpRrTtUu", frozenset({"--user", "--group", "--close-from", "--chdir",
                                               "--host", "--prompt", "--role", "--type",
                                               "--command-timeout", "--other-user"}),
                     transparent=False, assignments=True, stop_flags="elvKV", shell_flags="si"),
    "coproc": _Wrapper(transparent=False),
    "setsid": _Wrapper(),
    "stdbuf": _Wrapper("ioe", frozenset({"--input", "--output", "--error"})),
    "ionice": _Wrapper("cnp", frozenset({"--class", "--classdata", "--pid"})),
    "doas": _Wrapper("uC", transparent=False, stop_flags="CL", shell_flags="s"),
    "busybox": _Wrapper(transparent=False),
    # They only tune how the command runs (CPU, priority, a lock, tracing, a fake root).
    "taskset": _Wrapper(positional=1, stop_flags="phV"),
    "chrt": _Wrapper("TPD", frozenset({"--sched-runtime", "--sched-period", "--sched-deadline"}),
                     positional=1, optional_positional=r"[0-9]+\Z", stop_flags="pmhV"),
    "flock": _Wrapper("wE", frozenset({"--timeout", "--conflict-exit-code"}), positional=1,
                      string_after=frozenset({"-c", "--command"}), writes_positional=True),
    "watch": _Wrapper("nqs", frozenset({"--interval", "--equexit", "--shotsdir"}),
                      optional_values="d", joins=True, exec_flags=frozenset({"-x", "--exec"})),
    "strace": _Wrapper("IbeOSUaosXPpEu", frozenset({
        "--output", "--env", "--user", "--attach", "--trace", "--signal", "--status",
        "--trace-path", "--string-limit", "--columns", "--summary-sort-by", "--inject",
        "--fault", "--abbrev", "--verbose", "--raw", "--read", "--write", "--quiet"}),
        outputs=frozenset({"-o", "--output"}), environment=frozenset({"-E", "--env"})),
    "ltrace": _Wrapper("aADelnopsuwxF", frozenset({"--output", "--library", "--align"}),
                       outputs=frozenset({"-o", "--output"})),
    "catchsegv": _Wrapper(),
    "prlimit": _Wrapper("op", frozenset({"--output", "--pid"}),
                        optional_values="cdefilmnqrstuvxy", stop_flags="hV"),
    "fakeroot": _Wrapper("lsib", frozenset({"--lib", "--faked"}), bare_shell=True),
    "setarch": _Wrapper(positional=1, positional_first=True, bare_shell=True),
    "linux32": _Wrapper(bare_shell=True),
    "linux64": _Wrapper(bare_shell=True),
    "valgrind": _Wrapper(outputs=frozenset({"--log-file", "--xml-file"})),
    # Another user, group, root or set of namespaces: an allow rule must name them.
    "chroot": _Wrapper(long_values=frozenset({"--userspec", "--groups"}), transparent=False,
                       positional=1, bare_shell=True),
    "nsenter": _Wrapper("tSG", frozenset({"--target", "--setuid", "--setgid"}),
                        transparent=False, optional_values="muinpUCTrw", bare_shell=True),
    "unshare": _Wrapper("RwSG", frozenset({
        "--propagation", "--setgroups", "--map-user", "--map-group", "--map-users",
        "--map-groups", "--root", "--wd", "--setuid", "--setgid", "--monotonic", "--boottime"}),
        transparent=False, optional_values="muinpUCT", bare_shell=True),
    "setpriv": _Wrapper(long_values=frozenset({
        "--reuid", "--regid", "--ruid", "--rgid", "--euid", "--egid", "--groups", "--inh-caps",
        "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label",
        "--apparmor-profile", "--landlock-access", "--landlock-rule"}),
        transparent=False, stop_flags="dhV"),
    "firejail": _Wrapper(transparent=False, environment=frozenset({"--env"}), bare_shell=True),
    "sg": _Wrapper(transparent=False, positional=1, string_after=frozenset({"-c"}), joins=True,
                   lone_dash=True, bare_shell=True),
    "newgrp": _Wrapper(transparent=False, positional=1, lone_dash=True, bare_shell=True),
    "su": _Wrapper("cgGswu", _RUN_AS, transparent=False, lone_dash=True, bare_shell=True),
    "runuser": _Wrapper("cgGswu", _RUN_AS, transparent=False, lone_dash=True, bare_shell=True),
    "script": _Wrapper("cEIOBTmo", frozenset({
        "--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing",
        "--logging-format", "--output-limit"}), optional_values="t", bare_shell=True,
        outputs=frozenset({"-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io",
                           "--log-timing", "--timing"})),
    "parallel": _Wrapper(opaque="parallel builds its commands from its arguments and input"),
    "sem": _Wrapper(opaque="sem builds its command from its arguments"),
    "at": _Wrapper("qft", stop_flags="lrdcV", opaque="at runs commands it reads, later"),
    "batch": _Wrapper("qf", stop_flags="V", opaque="batch runs commands it reads, later"),
}
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
# Options anywhere (GNU getopt permutes): the command is a -c string, not the operands.
_PERMUTED = frozenset({"su", "runuser", "script"})
# env and sudo take any NAME=value before the command (bash imports `BASH_FUNC_f%%` as code).
_ASSIGNMENT = re.compile(r"[^=]+=", re.S)
_STDIN_ARGS = Word("<arguments from stdin>", literal=False)
_SH = Word("sh")

Options = list[tuple[str, "Word | None"]]


class Unwrapped(Struct):
    layers: list[Argv]
    allowable: int = 1  # leading layers an allow rule may match
    writes: list[Word] = []
    sets: list[Word] = []  # NAME=value words the command runs with (env X=1, strace -E X=1)
    opaque: str | None = None


def unwrap(argv: Argv) -> Unwrapped:
    """Look through wrappers: the layers, and what the wrappers write and set on the way."""
    found = Unwrapped([argv])
    transparent = True
    while True:
        current = found.layers[-1]
        if not current[0].literal:
            found.opaque = f"its program comes from an expansion ({current[0].text})"
            return found
        program = basename(current[0].text)
        spec = WRAPPERS.get(program)
        if spec is None and program != "find":
            if program == "tee":
                found.writes.extend(tee_files(current[1:]))
            elif program in ("cp", "mv", "ln"):
                found.writes.extend(copy_target(current[1:], program == "ln"))
            return found
        inner = _find_command(current[1:], found) if spec is None else \
            _inner(program, spec, current[1:], found)
        if inner is None:
            return found
        transparent = transparent and (spec is None or spec.transparent)
        found.layers.append(inner)
        found.allowable += transparent


def _inner(program: str, spec: _Wrapper, words: Argv, found: Unwrapped) -> Argv | None:
    """The argv this wrapper runs; None when it runs none (or cannot tell: found.opaque)."""
    if program in _PERMUTED:
        permuted = _permuted(spec, words)
        if permuted is None:
            found.opaque = f"the options of {program} come from an expansion"
            return None
        options, rest = permuted
    else:
        skipped = _skip_options(spec, words)
        if skipped is None:
            found.opaque = f"the options of {program} come from an expansion"
            return None
        options, rest, assigned = skipped
        found.sets.extend(assigned)
    names = {name for name, _ in options}
    found.writes.extend(v for n, v in options if n in spec.outputs and v is not None)
    found.sets.extend(v for n, v in options if n in spec.environment and v is not None)
    if program == "env" and names & {"-S", "--split-string"}:
        found.opaque = f"{program} -S splits a string into a command"
        return None
    flags = {n[1:] for n in names if len(n) == 2}
    if flags & set(spec.stop_flags):
        return None
    if spec.opaque:
        found.opaque = spec.opaque
        return None
    string = next((v for n, v in options if n in ("-c", "--command", "--session-command")
                   and program in _PERMUTED), None)
    if program in _PERMUTED:
        rest = _run_as(program, names, rest, found)
    elif spec.positional and not spec.positional_first:
        rest = _positional(spec, rest, found)
    if rest and rest[0].literal and rest[0].text in spec.string_after:
        string = _joined(rest[1:])
    elif spec.joins and rest and not names & spec.exec_flags:
        string = _joined(rest)
    if string is not None:
        return (_SH, Word("-c"), string)
    if not rest:
        if program == "xargs":  # xargs alone runs echo
            return (Word("echo"), _STDIN_ARGS)
        if spec.bare_shell or flags & set(spec.shell_flags):
            found.opaque = f"{program} with no command runs a shell that reads its input"
        return None
    if program == "xargs":
        if names & {"-I", "-i", "--replace"}:  # the input is spliced into the words
            rest = (rest[0], *(Word(w.text, False) for w in rest[1:]))
        rest = (*rest, _STDIN_ARGS)
    return rest


def _find_command(args: Argv, found: Unwrapped) -> Argv | None:
    """`find .. -exec CMD ;` (or `{} +`): CMD, which find runs (a second one: opaque), with
    each word holding `{}` from an expansion (the files found: any below the start points).
    What `-fprint FILE` and the like write are writes."""
    commands: list[Argv] = []
    i = 0
    while i < len(args):
        if args[i].literal and args[i].text in _FIND_WRITES and i + 1 < len(args):
            found.writes.append(args[i + 1])
        if not (args[i].literal and args[i].text in _FIND_RUNS):
            i += 1
            continue
        end = i + 1
        while end < len(args) and not (args[end].literal and (args[end].text == ";" or (
                args[end].text == "+" and args[end - 1].text == "{}"))):
            end += 1
        commands.append(args[i + 1 : end])
        i = end + 1
    if len(commands) > 1:
        found.opaque = "find runs more than one command (-exec .. -exec)"
        return None
    if not commands or not commands[0]:
        return None
    return tuple(Word(w.text, False) if "{}" in w.text else w for w in commands[0])


def _positional(spec: _Wrapper, rest: Argv, found: Unwrapped) -> Argv:
    if spec.optional_positional and rest and not re.match(spec.optional_positional, rest[0].text):
        return rest
    if spec.writes_positional and rest and not rest[0].text.isdigit():  # `flock 9`: an fd
        found.writes.append(rest[0])
    return rest[spec.positional:]


def _run_as(program: str, names: set[str], operands: Argv, found: Unwrapped) -> Argv:
    """script: the operand is its typescript. su/runuser: the user, then arguments for its
    shell; runuser -u: the command itself."""
    if program == "script":
        found.writes.append(operands[0] if operands else Word("typescript"))
        return ()
    if names & {"-u", "--user"}:
        return operands
    return (_SH, *operands[1:]) if len(operands) > 1 else ()


def _joined(words: Argv) -> Word:
    """The string a wrapper gives `sh -c` from these words (not literal if any is not)."""
    return Word(" ".join(w.text for w in words), all(w.literal for w in words))


def _option(spec: _Wrapper, words: Argv, i: int, options: Options) -> int:
    """Read the option at words[i] into options; the index after it (and its value)."""
    text = words[i].text
    following = words[i + 1] if i + 1 < len(words) else None
    if text.startswith("--"):
        name, eq, value = text.partition("=")
        takes_next = name in spec.long_values and not eq
        options.append((name, following if takes_next else Word(value) if eq else None))
        return i + (2 if takes_next else 1)
    if text == "-":
        options.append(("-", None))
        return i + 1
    i += 1
    for j, flag in enumerate(text[1:], 1):
        attached = text[j + 1:]
        if flag in spec.optional_values:
            options.append(("-" + flag, Word(attached) if attached else None))
            break
        if flag in spec.short_values:
            options.append(("-" + flag, Word(attached) if attached else following))
            return i + (0 if attached else 1)
        options.append(("-" + flag, None))
    return i


def _is_option(spec: _Wrapper, word: Word) -> bool:
    text = word.text
    return text.startswith("-") and len(text) > 1 or text == "-" and (
        spec.assignments or spec.lone_dash)


def _skip_options(spec: _Wrapper, words: Argv) -> tuple[Options, Argv, list[Word]] | None:
    """(options with their values, the wrapped argv, the NAME=value words before it)."""
    options: Options = []
    i = spec.positional if spec.positional_first else 0
    while i < len(words):
        word = words[i]
        if not word.literal and word.text.startswith("-"):
            return None
        if word.text == "--":
            i += 1
            break
        if not _is_option(spec, word):
            break
        i = _option(spec, words, i, options)
    rest = words[i:]
    assigned: list[Word] = []
    while spec.assignments and rest and _ASSIGNMENT.match(rest[0].text):
        assigned.append(rest[0])
        rest = rest[1:]
    return options, rest, assigned


def _permuted(spec: _Wrapper, words: Argv) -> tuple[Options, Argv] | None:
    """GNU getopt's order: options anywhere before `--`; (options, operands). A word from an
    expansion may be an option: None."""
    options: Options = []
    operands: list[Word] = []
    i = 0
    while i < len(words):
        word = words[i]
        if not word.literal:
            return None
        if word.text == "--":
            operands.extend(words[i + 1:])
            break
        if _is_option(spec, word):
            i = _option(spec, words, i, options)
        else:
            operands.append(word)
            i += 1
    return options, tuple(operands)
