"""Bash rules matched against the command as bash parses it, and path rules
that cover every tool reading or writing the same files. Unit tests of `swarm.core.shell.rules`."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.records.permissions import Decision
from swarm.core.shell.rules import validate_rule
from swarm.core.text.real_input import exact_rule
from swarm.errors import BadInputError
from tests.support.rule_helpers import bash, decide

RM = ["Bash(rm:*)"]

# -- deny: every spelling of the program, every place a command can hide -----------------------
# Each of these ran under `--deny 'Bash(rm:*)'` (bypassPermissions lets through what no rule
# stops, so that is where a missed deny shows).

@pytest.mark.parametrize("command", [
    "/bin/rm -f victim",
    "command rm -f victim",
    "r''m -f victim",
    "'rm' -f victim",
    "\\rm -f victim",
    "env rm -f victim",
    "echo victim | xargs rm",
    "xargs rm < list.txt",
    "bash -c 'rm -f victim'",
    "sh -c 'rm -f victim'",
    "eval 'rm -f victim'",
    "rm\t-f victim",
    "{ rm -f victim; }",
])
def test_each_reported_bypass_of_a_deny_rule_is_denied(command: str, cwd: Path) -> None:
    decision = bash(command, cwd, "bypassPermissions", deny=RM)
    assert decision == Decision("deny", "denied by rule Bash(rm:*)", "Bash(rm:*)"), command


def test_a_program_from_an_expansion_asks_and_bypass_mode_denies_it(cwd: Path) -> None:
    """`$(echo rm) x` could be rm: no deny rule can tell, so it asks; bypassPermissions never
    asks, and a deny rule that cannot be ruled out wins there (docs/design/bash-rules.md)."""
    for command in ["$(echo rm) -f victim", "$CMD -f victim", "${X} victim", "`echo rm` victim"]:
        assert bash(command, cwd, "default", deny=RM).behavior == "ask", command
        decision = bash(command, cwd, "bypassPermissions", deny=RM)
        assert decision.behavior == "deny", command
        assert "Bash(rm:*)" in decision.reason and "expansion" in decision.reason, decision.reason


@pytest.mark.parametrize("command", [
    "sudo -u root rm victim", "nice -n 5 rm victim", "nohup rm victim", "time rm victim",
    "timeout -s KILL 5 rm victim", "exec rm victim", "env -i A=1 B=2 rm victim",
    "command -p rm victim", "builtin eval 'rm victim'", "xargs -n 1 -P 2 rm",
    "sudo env nice -n 1 timeout 3 rm victim",
    "$'\\x72m' victim", '"r"m victim', "$\"rm\" victim", "~/bin/rm victim", "../../bin/rm x",
    "true && rm victim", "(rm victim)", "echo $(rm victim)", "cat <(rm victim)",
    "echo > >(rm victim)", "f() { rm victim; }", "if true; then rm victim; fi",
    "for f in a; do rm $f; done", "! rm victim", "X=$(rm victim)", "export X=$(rm victim)",
    "bash -lc 'rm victim'", "sh -e -c 'echo hi; rm victim'", "zsh -c 'rm victim'",
    "bash -c \"bash -c 'rm victim'\"", "eval rm victim", "trap 'rm victim' EXIT",
    "cat <<EOF\n$(rm victim)\nEOF",
])
def test_wrappers_and_nesting_do_not_hide_the_program(command: str, cwd: Path) -> None:
    assert bash(command, cwd, "bypassPermissions", deny=RM).behavior == "deny", command


@pytest.mark.parametrize("command", [
    "r\\\nm victim",            # a line continuation inside the program word: bash runs rm
    "{rm,-f} victim",           # brace expansion makes the program
    "r?m victim",               # a glob makes the program
    "echo 'unterminated",       # does not parse
    "rm victim (",              # a parse error after a plain command
    "a=(rm victim); \"${a[@]}\"",
])
def test_what_cannot_be_read_asks_when_a_deny_rule_exists(command: str, cwd: Path) -> None:
    decision = bash(command, cwd, "bypassPermissions", deny=RM)
    assert decision.behavior in ("ask", "deny"), command
    assert decision.behavior != "allow"


def test_unknown_words_make_a_multi_word_deny_uncertain_not_silent(cwd: Path) -> None:
    deny = ["Bash(git push:*)"]
    assert bash("git push origin", cwd, "bypassPermissions", deny=deny).behavior == "deny"
    for command in ["git $SUB origin", "git {push,x}", "echo push | xargs git"]:
        assert bash(command, cwd, "default", deny=deny).behavior == "ask", command
        assert bash(command, cwd, "bypassPermissions", deny=deny).behavior == "deny", command
    assert bash("git pull", cwd, "bypassPermissions", deny=deny).behavior == "allow"
    assert bash("git status $X", cwd, "bypassPermissions", deny=deny).behavior == "allow"


def test_things_that_only_look_like_rm_are_not_denied(cwd: Path) -> None:
    for command in ["rmdir empty", "echo rm", "echo 'rm -rf /'", "command -v rm", "# rm x",
                    "cat <<'EOF'\n$(rm victim)\nEOF", "git rm --cached x"]:
        assert bash(command, cwd, "bypassPermissions", deny=RM).behavior == "allow", command


def test_nested_shell_strings_stop_at_a_depth_limit(cwd: Path) -> None:
    command = "rm victim"
    for _ in range(6):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    assert bash(command, cwd, "bypassPermissions", deny=RM).behavior in ("deny", "ask")
    assert bash(command, cwd, "default", allow=["Bash(bash:*)", "Bash(rm:*)"]).behavior == "ask"


def test_a_redirection_is_checked_against_edit_deny_rules(cwd: Path) -> None:
    deny = ["Edit(secrets/**)"]
    assert bash("echo x > secrets/key", cwd, "bypassPermissions", deny=deny).behavior == "deny"
    assert bash("echo x | tee -a secrets/key", cwd, "bypassPermissions",
                deny=deny).behavior == "deny"
    assert bash("echo x > public/key", cwd, "bypassPermissions", deny=deny).behavior == "allow"


# -- allow: every simple command must match, and no write may leave the cwd ---------------------

@pytest.mark.parametrize("command", [
    "echo x > /elsewhere/f", "echo x >> /tmp/f", "echo x &> /tmp/f", "echo x >| /tmp/f",
    "echo x 2> /tmp/err", "echo x > ../up.txt", "echo x > ~/f", "echo x > $OUT",
    "{ echo x; } > /tmp/f", "echo x | tee /tmp/f", "echo x | tee -a ok.txt /tmp/f",
    "cd /tmp && echo x > f", "echo x >& /tmp/f",
])
def test_an_allow_rule_does_not_cover_a_write_outside_the_cwd(command: str, cwd: Path) -> None:
    decision = bash(command, cwd, allow=["Bash(echo:*)", "Bash(tee:*)", "Bash(cd:*)"])
    assert decision.behavior == "ask", command


@pytest.mark.parametrize("command", [
    "echo x > /dev/null", "echo x 2>/dev/null", "echo x > out.txt", "echo x >> src/log.txt",
    "echo x 2>&1", "echo x >&2", "echo x | tee out.txt", "echo x > {cwd}/abs.txt",
    "echo x 3>&-",
])
def test_an_allow_rule_covers_writes_inside_the_cwd_and_dev_null(command: str, cwd: Path) -> None:
    command = command.replace("{cwd}", str(cwd))
    decision = bash(command, cwd, allow=["Bash(echo:*)", "Bash(tee:*)"])
    assert decision.behavior == "allow", (command, decision.reason)


def test_every_simple_command_must_be_allowed(cwd: Path) -> None:
    allow = ["Bash(git status:*)"]
    for command in ["git status && rm x", "git status; rm x", "git status | sh",
                    "git status $(rm x)", "git status `rm x`", "(git status; rm x)",
                    "git status <(rm x)", "bash -c 'git status; rm x'"]:
        assert bash(command, cwd, allow=allow).behavior == "ask", command
    # Each command may be matched by a different rule.
    both = ["Bash(git status:*)", "Bash(npm test:*)"]
    decision = bash("git status && npm test -- -k x", cwd, allow=both)
    assert decision.behavior == "allow" and decision.rule == "Bash(git status:*), Bash(npm test:*)"
    assert bash("bash -c 'git status'", cwd, allow=allow).behavior == "allow"
    assert bash("timeout 5 git status", cwd, allow=allow).behavior == "allow"


def test_an_allow_rule_names_the_program_exactly(cwd: Path) -> None:
    allow = ["Bash(git status:*)"]
    assert bash("\\git status", cwd, allow=allow).behavior == "allow"  # same after quote removal
    assert bash("'git' status", cwd, allow=allow).behavior == "allow"
    for command in ["./git status", "/tmp/evil/git status", "sudo git status",
                    "PATH=/tmp/evil git status", "env PATH=/tmp/evil git status",
                    "LD_PRELOAD=/tmp/x.so git status", "git() { rm x; }; git status"]:
        assert bash(command, cwd, allow=allow).behavior == "ask", command
    assert bash("sudo git status", cwd, allow=["Bash(sudo git status:*)"]).behavior == "allow"


@pytest.mark.parametrize("command", [
    "$(echo echo) hi", "$CMD hi", "echo 'unterminated", "ec\\\nho hi", "e*o hi",
])
def test_opaque_commands_are_never_allowed_by_a_rule(command: str, cwd: Path) -> None:
    decision = bash(command, cwd, allow=["Bash(echo:*)", "Bash(e*o:*)", "Bash(ec:*)"])
    assert decision.behavior == "ask", command
    assert "default mode" in decision.reason


def test_a_bare_bash_rule_still_allows_everything(cwd: Path) -> None:
    for command in ["$CMD x", "echo x > /tmp/f", "echo 'unterminated"]:
        assert bash(command, cwd, allow=["Bash"]).behavior == "allow", command


def test_exact_rules_match_the_words_or_the_whole_text(cwd: Path) -> None:
    assert bash("npm  'test'", cwd, allow=["Bash(npm test)"]).behavior == "allow"
    assert bash("npm test --watch", cwd, allow=["Bash(npm test)"]).behavior == "ask"
    exact = "cd src && make > build.log"
    assert bash(exact, cwd, allow=[f"Bash({exact})"]).behavior == "allow"
    assert bash(exact + " && rm x", cwd, allow=[f"Bash({exact})"]).behavior == "ask"
    # What `--always` adds for a multi-line command is a rule that allows it next time.
    multi = "echo one\necho two > out.txt"
    rule = exact_rule("Bash", {"command": multi}, cwd)
    assert rule == f"Bash({multi})"
    assert bash(multi, cwd, allow=[rule]).behavior == "allow"


@pytest.mark.parametrize("rule", ["Bash(git status && rm:*)", "Bash($X:*)", "Bash(:*)",
                                  "Bash(echo 'open:*)"])
def test_a_prefix_that_is_not_one_command_is_refused(rule: str) -> None:
    with pytest.raises(BadInputError, match="one command's leading words"):
        validate_rule(rule)
    assert validate_rule("Bash(cd src && make)") == "Bash(cd src && make)"  # exact: any text


# -- path rules: ~ is home, Read covers Grep and Glob, Edit covers Write ------------------------

@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("secret")
    monkeypatch.setenv("HOME", str(home))
    return home


def test_tilde_in_a_rule_is_the_home_directory(cwd: Path, home: Path) -> None:
    deny = ["Read(~/.ssh/**)"]
    for path in ["~/.ssh/id_ed25519", str(home / ".ssh" / "id_ed25519")]:
        decision = decide("Read", {"file_path": path}, "default", cwd, deny=deny)
        assert decision.behavior == "deny", path
    assert decide("Read", {"file_path": "~/notes.txt"}, "default", cwd,
                  deny=deny).behavior == "allow"


def test_a_read_rule_covers_grep_and_glob(cwd: Path, home: Path) -> None:
    deny = ["Read(~/.ssh/**)"]
    blocked = [("Grep", {"pattern": "BEGIN", "path": "~/.ssh"}),
               ("Grep", {"pattern": "BEGIN", "path": str(home / ".ssh" / "id_ed25519")}),
               ("Glob", {"pattern": "*", "path": "~/.ssh"}),
               ("Glob", {"pattern": ".ssh/*", "path": str(home)}),
               ("Glob", {"pattern": str(home / ".ssh" / "*")})]
    for tool, args in blocked:
        assert decide(tool, args, "default", cwd, deny=deny).behavior == "deny", (tool, args)
    for tool, args in [("Grep", {"pattern": "x"}), ("Glob", {"pattern": "**/*.py"}),
                       ("Grep", {"pattern": "x", "path": str(home)})]:
        assert decide(tool, args, "default", cwd, deny=deny).behavior == "allow", (tool, args)
    assert decide("Grep", {"pattern": "x", "path": "src"}, "bypassPermissions", cwd,
                  deny=["Read"]).behavior == "deny"


def test_an_edit_rule_covers_write(cwd: Path) -> None:
    assert decide("Write", {"file_path": "src/new.py", "content": ""}, "default", cwd,
                  allow=["Edit(src/**)"]).behavior == "allow"
    assert decide("Write", {"file_path": "docs/new.md", "content": ""}, "default", cwd,
                  allow=["Edit(src/**)"]).behavior == "ask"
    assert decide("Write", {"file_path": "src/x.py", "content": ""}, "bypassPermissions", cwd,
                  deny=["Edit(src/**)"]).behavior == "deny"
    # A Write rule stays a Write rule.
    assert decide("Edit", {"file_path": "src/x.py", "old_string": "a", "new_string": "b"},
                  "default", cwd, allow=["Write(src/**)"]).behavior == "ask"


def test_a_deny_rule_sees_the_path_as_written_and_as_resolved(cwd: Path, tmp_path: Path) -> None:
    real = tmp_path / "real-secrets"
    real.mkdir()
    (cwd / "secrets").symlink_to(real)
    deny = [f"Read({real}/**)", "Read(secrets/**)"]
    assert decide("Read", {"file_path": "secrets/k"}, "default", cwd, deny=deny[:1]).behavior == \
        "deny"
    assert decide("Read", {"file_path": str(real / "k")}, "default", cwd,
                  deny=deny[1:]).behavior == "deny"


@pytest.mark.parametrize("command", [
    "echo 'rm victim' | bash", "bash <<< 'rm victim'", "sh -s < script.sh",
    "shopt -s expand_aliases\nalias r=rm\nr victim", "hash -p /bin/rm ls; ls victim",
])
def test_code_the_parser_cannot_see_asks(command: str, cwd: Path) -> None:
    assert bash(command, cwd, "default", deny=RM).behavior == "ask", command
    assert bash(command, cwd, "bypassPermissions", deny=RM).behavior == "deny", command
    assert bash(command, cwd, allow=["Bash(echo:*)", "Bash(bash:*)", "Bash(sh:*)",
                                     "Bash(shopt:*)", "Bash(alias:*)", "Bash(r:*)",
                                     "Bash(hash:*)", "Bash(ls:*)"]).behavior == "ask"


def test_scripts_are_their_own_program_but_find_exec_is_looked_through(cwd: Path) -> None:
    """A known limit (docs/design/bash-rules.md): what a script file runs is not read. `find -exec` was
    one too; its command is a layer, like a wrapper's."""
    assert bash("bash script.sh", cwd, "bypassPermissions", deny=RM).behavior == "allow"
    assert bash("find . -name x -exec rm {} +", cwd, "bypassPermissions", deny=RM).behavior == \
        "deny"


# -- code in bash's own evaluation, and writes to protected paths ----------------------
# Each reproduction as it was reported, with `--allow 'Bash(echo:*)' --deny 'Bash(rm:*)'` (plus
# an allow rule for the builtin it uses). None may run unasked: `default` asks; in
# `bypassPermissions` the deny rule that cannot be ruled out wins.

ECHO_RM = (["Bash(echo:*)"], RM)
ISSUE_21 = [
    # (command, allow, deny, mode, expected)
    ("echo hi && [[ -v 'a[$(rm victim)]' ]]", *ECHO_RM, "default", "ask"),
    ("echo hi && [[ -v 'a[$(rm victim)]' ]]", *ECHO_RM, "bypassPermissions", "deny"),
    ("echo $(( 'b[$(rm victim2)]' ))", *ECHO_RM, "default", "ask"),
    ("echo $(( 'b[$(rm victim2)]' ))", *ECHO_RM, "bypassPermissions", "deny"),
    ("test -v 'a[$(rm victim)]'", ["Bash(test:*)"], RM, "default", "ask"),
    ("test -v 'a[$(rm victim)]'", ["Bash(test:*)"], RM, "bypassPermissions", "deny"),
    ("printf -v 'a[$(rm victim)]' x", ["Bash(printf:*)"], RM, "default", "ask"),
    ("printf -v 'a[$(rm victim)]' x", ["Bash(printf:*)"], RM, "bypassPermissions", "deny"),
    ("read 'a[$(rm victim)]' <<< x", ["Bash(read:*)"], RM, "default", "ask"),
    ("read 'a[$(rm victim)]' <<< x", ["Bash(read:*)"], RM, "bypassPermissions", "deny"),
    ("let 'a[$(rm victim)]=1'", ["Bash(let:*)"], RM, "default", "ask"),
    ("let 'a[$(rm victim)]=1'", ["Bash(let:*)"], RM, "bypassPermissions", "deny"),
    ("trap -- 'rm v3' EXIT", ["Bash(trap:*)"], RM, "default", "deny"),
    ("trap -- 'rm v3' EXIT", [], RM, "bypassPermissions", "deny"),
    ("eval -- 'rm v4'", ["Bash(eval:*)"], RM, "default", "deny"),
    ("eval -- 'rm v4'", [], RM, "bypassPermissions", "deny"),
    ("rbash -c 'rm x'", ["Bash(rbash:*)"], RM, "default", "deny"),
    ("rbash -c 'rm x'", [], RM, "bypassPermissions", "deny"),
    ("echo '[core] fsmonitor = rm x' >> .git/config", *ECHO_RM, "default", "ask"),
    ("echo '[core] fsmonitor = rm x' >> .git/config", *ECHO_RM, "acceptEdits", "ask"),
    ("echo '{}' > .swarm/settings.json", *ECHO_RM, "default", "ask"),
    ("echo '{}' > .swarm/settings.json", *ECHO_RM, "acceptEdits", "ask"),
]


@pytest.mark.parametrize(("command", "allow", "deny", "mode", "expected"), ISSUE_21)
def test_issue_21_reproductions(command: str, allow: list[str], deny: list[str], mode: str,
                                expected: str, cwd: Path) -> None:
    decision = bash(command, cwd, mode, allow=allow, deny=deny)
    assert decision.behavior == expected, (command, mode, decision.reason)
