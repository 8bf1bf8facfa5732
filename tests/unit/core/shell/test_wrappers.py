"""More wrappers looked through, shells that read code from input, prompt and indirect
expansions of values bash sets itself. What each kind of wrapper means to allow rules; the
deny side and the real-bash cross-check are the tables of tests/unit/core/shell/test_evaluation.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.shell.parse import parse
from swarm.core.shell.rules import validate_rule
from swarm.errors import BadInputError
from tests.support.rule_helpers import bash

GIT = ["Bash(git status:*)"]


def programs(command: str) -> list[list[str | None]]:
    """Each simple command's layers, by program."""
    return [[layer[0].text if layer else None for layer in c.layers] for c in parse(command)]


@pytest.mark.parametrize(("command", "layers"), [
    ("taskset -a -c -- 0,1 rm v", [["taskset", "rm"]]),
    ("nsenter -m/proc/1/ns/mnt -t1 rm v", [["nsenter", "rm"]]),
    ("unshare --mount=/tmp/ns -r rm v", [["unshare", "rm"]]),
    ("chroot --userspec root:root / rm v", [["chroot", "rm"]]),
    ("strace -f -e trace=none -o log rm v", [["strace", "rm"]]),
    ("flock -w 5 lk -c 'rm v'", [["flock", "sh"], ["rm"]]),
    ("su -l -c 'rm v' root", [["su", "sh"], ["rm"]]),
    ("watch -n 1 'rm v; ls'", [["watch", "sh"], ["rm"], ["ls"]]),
    ("watch -x rm v", [["watch", "rm"]]),
    ("runuser -u root -- rm v", [["runuser", "rm"]]),
    ("script -qc 'rm v' /dev/null", [["script", "sh"], ["rm"]]),
    ("sudo taskset 1 chrt -o 0 rm v", [["sudo", "taskset", "chrt", "rm"]]),
    ("find . -name '*.pyc' -exec rm -f {} +", [["find", "rm"]]),
    ("find . -type f -execdir sh -c 'rm v' \\; -print", [["find", "sh"], ["rm"]]),
])
def test_each_wrapper_is_one_layer_and_its_string_is_parsed(command: str,
                                                            layers: list[list[str]]) -> None:
    assert programs(command) == layers
    assert not any(c.opaque for c in parse(command))


@pytest.mark.parametrize("command", [
    "taskset -c 0 git status", "stdbuf -oL git status", "setsid git status",
    "ionice -c3 git status", "chrt -o 0 git status", "flock lk git status",
    "flock -x lk -c 'git status'", "watch -n 5 git status", "watch 'git status'",
    "catchsegv git status", "strace -f -o trace.txt git status", "ltrace git status",
    "prlimit --nofile=1024 git status", "fakeroot git status", "setarch x86_64 -R git status",
    "find . -maxdepth 1 -exec git status {} +",
])
def test_a_wrapper_that_only_tunes_how_it_runs_is_allowed_by_the_inner_rule(
        command: str, cwd: Path) -> None:
    decision = bash(command, cwd, allow=GIT)
    assert decision.behavior == "allow", (command, decision.reason)
    assert bash(command, cwd, allow=["Bash(git log:*)"]).behavior == "ask", command


@pytest.mark.parametrize(("command", "wrapper"), [
    ("chroot / git status", "chroot"), ("nsenter -t 1 -m git status", "nsenter"),
    ("unshare -r git status", "unshare"), ("runuser -u root git status", "runuser"),
    ("firejail git status", "firejail"), ("setpriv --reuid=0 git status", "setpriv"),
    ("doas git status", "doas"),
])
def test_a_wrapper_that_runs_as_another_user_or_root_needs_a_rule_naming_it(
        command: str, wrapper: str, cwd: Path) -> None:
    assert bash(command, cwd, allow=GIT).behavior == "ask", command
    assert bash(command, cwd, allow=[f"Bash({wrapper}:*)"]).behavior == "allow", command


def test_su_and_sg_strings_need_the_wrapper_and_the_commands_of_the_string(cwd: Path) -> None:
    for command, wrapper in [("su -c 'git status'", "su"), ("sg root -c 'git status'", "sg"),
                             ("runuser root -c 'git status'", "runuser")]:
        assert bash(command, cwd, allow=GIT).behavior == "ask", command
        assert bash(command, cwd, allow=[f"Bash({wrapper}:*)"]).behavior == "ask", command
        assert bash(command, cwd, allow=[f"Bash({wrapper}:*)", *GIT]).behavior == "allow", \
            command


@pytest.mark.parametrize("command", [
    "strace -E LD_PRELOAD=/tmp/x.so git status", "strace -o /tmp/elsewhere.txt git status",
    "ltrace -o ../trace.txt git status", "strace -o .git/hooks/pre-commit git status",
])
def test_a_tracer_that_sets_variables_or_writes_outside_asks(command: str, cwd: Path) -> None:
    decision = bash(command, cwd, allow=[*GIT, "Bash(strace:*)", "Bash(ltrace:*)"])
    assert decision.behavior == "ask", (command, decision.reason)


@pytest.mark.parametrize("command", [
    "parallel rm ::: victim", "echo 'rm victim' | parallel", "parallel git status ::: a",
    "echo 'rm victim' | su", "echo 'rm victim' | sudo -s", "chroot /",
    "source /dev/stdin <<< 'rm victim'", "bash <(echo 'rm victim')",
    "echo 'rm victim' | at now", "find . -exec rm {} \\; -exec echo {} \\;",
])
def test_what_builds_or_reads_its_commands_is_never_allowed(command: str, cwd: Path) -> None:
    allow = [*GIT, "Bash(echo:*)", "Bash(parallel:*)", "Bash(su:*)", "Bash(sudo:*)",
             "Bash(chroot:*)", "Bash(source:*)", "Bash(bash:*)", "Bash(rm:*)", "Bash(at:*)",
             "Bash(find:*)"]
    decision = bash(command, cwd, allow=allow)
    assert decision.behavior == "ask" and "cannot be checked" in decision.reason, \
        (command, decision.reason)
    assert bash(command, cwd, "bypassPermissions", deny=["Bash(curl:*)"]).behavior == "deny"


def test_cd_sets_the_directory_variables_but_an_ordinary_cd_stays_allowed(cwd: Path) -> None:
    allow = ["Bash(cd:*)", "Bash(pushd:*)", "Bash(echo:*)", *GIT]
    for command in ["cd src && git status", "pushd src && git status", "cd src; echo $PWD"]:
        assert bash(command, cwd, allow=allow).behavior == "allow", command
    for command in ["cd src && echo ${PWD@P}", "cd src && echo ${OLDPWD@P}",
                    "pushd src && echo ${DIRSTACK[1]@P}"]:
        decision = bash(command, cwd, allow=allow)
        assert decision.behavior == "ask" and "cannot be checked" in decision.reason, command


def test_a_rule_may_name_a_program_that_alone_would_read_its_input(cwd: Path) -> None:
    """`bash`, `su`, `chroot` alone read a shell from input (opaque); as a rule's words they are
    only words: `Bash(bash:*)` allows `bash ./build.sh`, never `echo x | bash`."""
    for rule in ("Bash(bash:*)", "Bash(su:*)", "Bash(chroot:*)", "Bash(sudo -s:*)"):
        assert validate_rule(rule) == rule
    assert bash("bash ./build.sh", cwd, allow=["Bash(bash:*)"]).behavior == "allow"
    assert bash("echo x | bash", cwd, allow=["Bash(bash:*)", "Bash(echo:*)"]).behavior == "ask"
    with pytest.raises(BadInputError):
        validate_rule("Bash($X:*)")
