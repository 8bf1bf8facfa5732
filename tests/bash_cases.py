"""The command tables of the Bash evaluation tests (tests/test_bash_eval.py): what must be
opaque, what is parsed and denied, what stays checkable. Each opaque or parsed entry is also run
in the real bash there (with `touch ran` for `rm victim`)."""

from __future__ import annotations

RM = ["Bash(rm:*)"]
# Allow rules for every builtin and program the commands below use, so only the evaluated
# string can make a command ask.
EVERYTHING = [f"Bash({p}:*)" for p in (
    "echo", "test", "[", "printf", "read", "let", "declare", "typeset", "local", "readonly",
    "export", "mapfile", "readarray", "unset", "wait", "getopts", "trap", "eval", "source", ".",
    "compgen", "fc", "set", "sh", "bash", "dash", "rbash", "ksh", "zsh", "busybox", "/bin/sh",
    "/usr/bin/bash", "nice", "env", "timeout", "command", "builtin", "sudo", "exec", "nohup",
    "xargs", "setsid", "stdbuf", "ionice", "doas", "time", "cat", "f", ":", "true", "tee", "cp",
    "mv", "ln", "cd", "pushd", "popd", "mkdir", "set", "taskset", "chroot", "strace", "ltrace",
    "nsenter", "unshare", "chrt", "flock", "catchsegv", "runuser", "su", "watch", "firejail",
    "parallel", "prlimit", "setpriv", "script", "sg", "fakeroot", "setarch", "IFS=", "find",
    "at", "batch", "select")]





# -- evaluation contexts: code inside becomes opaque ------------------------------------------
# Each string here is code to bash (checked against bash 5.2: the `rm` runs). Opaque: never
# allowed by a rule, asks in default, denied in bypassPermissions when a Bash deny rule exists.

OPAQUE = [
    # array subscripts and arithmetic
    "[[ -v 'a[$(rm victim)]' ]]",
    "[[ ! -v \"a[\\$(rm victim)]\" ]]",
    "[[ 'a[$(rm victim)]' -eq 1 ]]",
    "test -v 'a[$(rm victim)]'",
    "[ -v 'a[$(rm victim)]' ]",
    "(( 'a[$(rm victim)]' ))",
    "echo $(( 'a[$(rm victim)]' ))",
    "echo \"$(( 'a[$(rm victim)]' ))\"",
    "echo $[ 'a[$(rm victim)]' ]",
    "for (( i='a[$(rm victim)]'; i<1; i++ )); do :; done",
    "let 'a[$(rm victim)]=1'",
    "let \"x = a[\\$(rm victim)]\"",
    "echo ${a['$(rm victim)']}",
    "a['$(rm victim)']=1",
    "a=( ['$(rm victim)']=1 )",
    "echo $(( $(cat n.txt) + 1 ))",
    "[[ $(cat n.txt) -gt 1 ]]",
    # declarations with subscripts, integer and nameref attributes
    "declare 'a[$(rm victim)]=1'",
    "typeset 'a[$(rm victim)]=1'",
    "f() { local 'a[$(rm victim)]=1'; }; f",
    "readonly 'a[$(rm victim)]=1'",
    "export 'a[$(rm victim)]=1'",
    "builtin declare 'a[$(rm victim)]=1'",
    "declare -i x='a[$(rm victim)]'",
    "declare -i x; x='a[$(rm victim)]'",
    "declare -n r='a[$(rm victim)]'; echo $r",
    "declare -n r; r='a[$(rm victim)]'; echo $r",
    # builtins that take a variable name
    "printf -v 'a[$(rm victim)]' x",
    "read 'a[$(rm victim)]' <<< x",
    "read -r -a 'a[$(rm victim)]' <<< x",
    "mapfile 'a[$(rm victim)]' < n.txt",
    "readarray -t 'a[$(rm victim)]' < n.txt",
    "unset 'a[$(rm victim)]'",
    "wait -p 'a[$(rm victim)]' -n",
    "getopts a 'a[$(rm victim)]'",
    "n=$(cat n.txt); printf -v \"$n\" x",
    # values bash evaluates again: a variable's value in arithmetic or as a name
    "x='a[$(rm victim)]'; echo $((x))",
    "x='a[$(rm victim)]'; echo $(( $x + 1 ))",
    "x='a[$(rm victim)]'; [[ $x -lt 1 ]]",
    "for i in 'a[$(rm victim)]'; do echo $((i)); done",
    "read -r n < n.txt; echo $((n + 1))",
    "while read -r n; do (( n > 1 )); done < n.txt",
    "f() { echo $(( $1 )); }; f 'a[$(rm victim)]'",
    "x='a[$(rm victim)]'; echo ${!x}",
    "x='$(rm victim)'; echo ${x@P}",
    "x='a[$(rm victim)]' bash -c 'echo $((x))'",
    "source ./env.sh; echo $((x))",
    # variables bash runs as code
    "PS4='$(rm victim)'; set -x; true",
    "BASH_ENV='$(rm victim)' bash -c true",
    "export PS4='$(rm victim)'",
    "compgen -W '$(rm victim)' x",
    "compgen -C 'rm victim' x",
    "fc -s",
    # strings run as code that are not literals
    "eval \"$CMD\"",
    "eval -- \"$CMD\"",
    "trap \"$CMD\" EXIT",
    "trap -- \"$CMD\" EXIT",
    "bash -c \"$CMD\"",
    "mapfile -C \"$CB\" -c 1 a < n.txt",
    "source \"$F\"",
    ". $F",
    # issue 32: values bash sets itself (cd, pushd: PWD, OLDPWD, DIRSTACK) expanded as prompts
    "mkdir -p '$(rm victim)' && cd '$(rm victim)' && echo ${PWD@P}",
    "mkdir -p '$(rm victim)' && builtin cd -- '$(rm victim)' && echo \"${PWD@P}\"",
    "mkdir -p '$(rm victim)' && cd '$(rm victim)' && cd .. && echo ${OLDPWD@P}",
    "mkdir -p '$(rm victim)' && pushd '$(rm victim)' && echo ${DIRSTACK[0]@P}",
    "mkdir -p '$(rm victim)' && pushd '$(rm victim)' && pushd .. && popd && echo ${PWD@P}",
    # issue 32: subscripted @P and ${!x[0]}, arrays from for/read -a/mapfile, specials
    "for x in '$(rm victim)'; do echo ${x[0]@P}; done",
    "for x in 'a[$(rm victim)]'; do echo ${!x[0]}; done",
    "x=('$(rm victim)'); echo ${x[@]@P}",
    "x='a[$(rm victim)]'; echo ${!x[0]@Q}",
    "IFS= read -r -a x <<< '$(rm victim)'; echo ${x[0]@P}",
    "mapfile -t x <<< '$(rm victim)'; echo ${x[0]@P}",
    "readarray x < n.txt; echo \"${x[@]@P}\"",
    "mapfile -t < n.txt; echo ${MAPFILE[0]@P}",
    "select x in '$(rm victim)'; do echo ${x[0]@P}; break; done <<< 1",
    "set -- '-a$(rm victim)'; getopts a: o; echo ${OPTARG[0]@P}",
    "printf -v x '%s' '$(rm victim)'; echo ${x[0]@P}",
    "read -ra x <<< 'a[$(rm victim)]'; echo ${!x[0]}",
    "x='$(rm victim)'; echo ${x[0]@E}",
    "x='a[$(rm victim)]'; echo ${!x:-default}",
    "x='a[$(rm victim)]'; echo ${!x#a}",
    "x=('a[$(rm victim)]'); echo ${!x[@]:0}",
    "y='$(rm victim)'; x=y; echo ${!x@P}",
    "f() { echo ${@@P}; }; f '$(rm victim)'",
    "set -- '$(rm victim)'; echo \"${*@P}\"",
    "set -- 'a[$(rm victim)]'; echo ${!@}",
    "declare -A h; h['$(rm victim)']=1; echo ${!h[@]@P}",
    "mkdir -p '$(rm victim)' && cp /bin/true '$(rm victim)/t1' && "
    "PATH=\"$PWD/\\$(rm victim):$PATH\" && t1 && echo ${BASH_CMDS[t1]@P}",
    "mkdir -p '$(rm victim)' && cp /bin/bash '$(rm victim)/' && "
    "PATH=\"$PWD/\\$(rm victim):$PATH\" bash -c 'echo ${BASH@P}'",
    # issue 32: a function handed to bash through the environment (env takes any NAME=value)
    "env 'BASH_FUNC_ls%%=() { rm victim; }' bash -c ls",
    "env -i PATH=\"$PATH\" 'BASH_FUNC_f%%=() { rm victim; }' bash -c f",
    "strace -o /dev/null -E 'BASH_FUNC_ls%%=() { rm victim; }' bash -c ls",
    # issue 32: code read from input by source, ., or a shell's script operand
    "source /dev/stdin <<< 'rm victim'",
    ". /dev/fd/0 <<< 'rm victim'",
    "source /proc/self/fd/0 <<< 'rm victim'",
    "echo 'rm victim' | source /dev//stdin",
    ". /dev/fd/3 3<<< 'rm victim'",
    "source <(echo 'rm victim')",
    "bash <(echo 'rm victim')",
    "bash /dev/stdin <<< 'rm victim'",
    "sh -e /proc/self/fd/0 <<< 'rm victim'",
    # issue 32: wrappers that run a shell reading its input when given no command
    "echo 'rm victim' | su",
    "echo 'rm victim' | su -",
    "echo 'rm victim' | chroot /",
    "echo 'rm victim' | unshare",
    "echo 'rm victim' | nsenter -t 1 -m",
    "echo 'rm victim' | runuser -u root",
    "echo 'rm victim' | sudo -s",
    "echo 'rm victim' | doas -s",
    "echo 'rm victim' | firejail",
    "echo 'rm victim' | script -q /dev/null",
    # issue 32: wrappers that build commands from their arguments or input
    "parallel rm ::: victim",
    "echo 'rm victim' | parallel",
    "echo 'rm victim' | at now",
    "echo 'rm victim' | batch",
]


# -- evaluation contexts whose string is a literal: parsed and checked like any command ----------

PARSED = [
    "trap 'rm victim' EXIT",
    "trap -- 'rm victim' EXIT",
    "trap -- 'rm victim' INT TERM",
    "eval 'rm victim'",
    "eval -- 'rm victim'",
    "eval -- rm victim",
    "builtin eval -- 'rm victim'",
    "command eval 'rm victim'",
    "mapfile -C 'rm victim' -c 1 a < n.txt",
    "readarray -t -C 'rm victim' arr < n.txt",
    "sh -c 'rm victim'", "bash -c 'rm victim'", "dash -c 'rm victim'", "rbash -c 'rm victim'",
    "ksh -c 'rm victim'", "zsh -c 'rm victim'", "mksh -c 'rm victim'",
    "busybox sh -c 'rm victim'", "/bin/sh -c 'rm victim'", "/usr/bin/rbash -c 'rm victim'",
    "bash -e -c -- 'rm victim'",
    "echo x | xargs sh -c 'rm victim'",
    # `--` ends the options of every wrapper
    "nice -- rm victim", "nice -n 5 -- rm victim", "env -- rm victim", "env -i -- rm victim",
    "timeout -- 5 rm victim", "timeout -s KILL -- 5 rm victim", "command -- rm victim",
    "builtin -- eval 'rm victim'", "sudo -- rm victim", "sudo -u root -- rm victim",
    "exec -- rm victim", "nohup -- rm victim", "echo x | xargs -- rm", "setsid -- rm victim",
    "stdbuf -o0 -- rm victim", "ionice -c 3 -- rm victim", "doas -- rm victim",
    "time -- rm victim", "time -p -- rm victim",
    # issue 32: more wrappers looked through
    "taskset 0x1 rm victim", "taskset -c 0 rm victim", "taskset -a -c -- 0 rm victim",
    "chroot / rm victim", "chroot --userspec root:root / rm victim",
    "chroot --skip-chdir -- / rm victim",
    "strace -f -o /dev/null rm victim", "strace -qq -e trace=none -- rm victim",
    "strace -E X=1 -s 10 rm victim", "ltrace -o /dev/null rm victim",
    "nsenter -t 1 -m -- rm victim", "nsenter --target 1 --mount rm victim",
    "nsenter -m/proc/1/ns/mnt -t1 rm victim",
    "ionice -c3 -n7 rm victim", "ionice -t -c 2 rm victim", "stdbuf -oL -eL rm victim",
    "setsid -f rm victim", "setsid --wait rm victim",
    "flock lk rm victim", "flock -w 5 lk rm victim", "flock -x lk -c 'rm victim'",
    "flock lk --command 'rm victim'",
    "unshare -r rm victim", "unshare --map-root-user --fork -- rm victim",
    "unshare -m --propagation private rm victim", "unshare --mount=/tmp/ns -- rm victim",
    "chrt -o 0 rm victim", "chrt --other -- 0 rm victim", "chrt -T 5 -d 0 rm victim",
    "doas -u root rm victim", "firejail rm victim", "firejail --noprofile --quiet rm victim",
    "catchsegv rm victim",
    "runuser -u root -- rm victim", "runuser -u root rm victim", "runuser root -c 'rm victim'",
    "su -c 'rm victim'", "su - root -c 'rm victim'", "su root -s /bin/sh -c 'rm victim'",
    "su --command='rm victim'", "su -c'rm victim' root", "su -l -c 'rm victim' root",
    "watch 'rm victim'", "watch -n 1 rm victim", "watch -x -- rm victim",
    "prlimit --nofile=1024 rm victim", "prlimit -n1024 -- rm victim",
    "setpriv --reuid=0 rm victim", "setpriv --no-new-privs -- rm victim",
    "script -qc 'rm victim' /dev/null", "script -q -c 'rm victim' /dev/null",
    "script --command 'rm victim' -q /dev/null", "sg root -c 'rm victim'", "sg root 'rm victim'",
    "fakeroot rm victim", "fakeroot -- rm victim", "setarch x86_64 rm victim",
    "setarch x86_64 -R rm victim",
    "find . -maxdepth 0 -exec rm victim \\;", "find . -maxdepth 0 -execdir rm victim {} +",
    "find n.txt -ok rm victim \\;", "find . -maxdepth 0 -exec sh -c 'rm victim' \\;",
]


# -- ordinary scripts stay checkable ---------------------------------------------------------------
# Arithmetic made only of numbers, operators and variables the command gives numbers (or does
# not set at all) is not code: these are allowed by rules, and not denied by an unrelated rule.

CHECKABLE = [
    "echo $((1+2))",
    "echo $(( 16#ff + 0x10 + 2#101 - (3 * 4) % 5 ))",
    "echo $[1 + 2]",
    "(( 1 < 2 )) && echo yes",
    "for ((i=0; i<3; i++)); do echo $i; done",
    "for ((i=0; i<3; i++)); do echo $((i * 2)); done",
    "for i in 1 2 3; do echo $((i * 2)); done",
    "echo $(( $# + $? + ${#HOME} ))",
    "echo $((HOME_COUNT + 1))",
    "[[ -v HOME ]] && echo set",
    "[[ $# -eq 0 ]] && echo none",
    "[[ -n $HOME && 3 -gt 2 ]] || echo no",
    "test -v PATH",
    "[ -v PATH ] && echo set",
    "test 'a[$(rm victim)]' = x",
    "printf -v out '%s' x",
    "printf '%d\\n' 3",
    "read -r line < n.txt",
    "read -r -a words <<< 'a b'",
    "mapfile -t lines < n.txt",
    "let 'x = 1 + 2'",
    "let x=1+2 y=x*2",
    "echo ${arr[0]} ${arr[1+1]} ${#arr[@]} ${arr[@]} ${!arr[@]}",
    "trap 'echo bye' EXIT",
    "eval 'echo hi'",
    "source ./env.sh",
    ". ./env.sh && echo ok",
    "echo '$((x))' \"a[\\$(rm x)]\"",
    # issue 32: prompt and indirect expansions of values that cannot hold code
    "cd src && echo ${PWD} \"$OLDPWD\" ${PWD@Q} ${#PWD}",
    "echo ${PWD@P} ${HOME@P}",
    "for x in 1 2; do echo ${x[0]@P} ${!x}; done",
    "echo ${!arr[@]} ${!arr[*]} ${!BASH*} ${!BASH@} ${!#}",
    "echo ${x@Q} ${x@U} ${x@L} ${x[0]@u} ${x@a} ${x@A} ${h[@]@K}",
    "bash ./build.sh && sh -e ./x.sh",
    "source ./env.sh && . /dev/null",
    "taskset -c 0 echo hi && stdbuf -oL echo hi && watch -x -- echo hi",
]
