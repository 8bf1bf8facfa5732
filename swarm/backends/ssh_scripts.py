"""The POSIX sh scripts the `ssh` backend runs on a teammate's host (see ssh.py).

Each runs as `exec sh -c SCRIPT swarm-ssh ARG...`: the script is a constant, and everything that
varies (team, member, pane, pid, paths) arrives as a positional argument, quoted once by
`shlex.quote` on this side; nothing from the team is ever pasted into the script's text.
Common arguments: $1 team, $2 member, $3 tmux socket ('' = tmux's default; a path = `-S`).
"""

from __future__ import annotations

# Defined first in most scripts: tmux on the team's socket, and the pane's command. The pane
# runs the agent's script (its path as $0) under `env -i`, keeping only what a login gives
# (HOME, PATH, USER, LOGNAME), the terminal's own variables and the locale: nothing the user's
# shell profile exported reaches the agent.
_TM = r"""
S=$3
tm() {
  case $S in
    "") tmux "$@" ;;
    */*) tmux -S "$S" "$@" ;;
    *) tmux -L "$S" "$@" ;;
  esac
}
RUN='exec env -i HOME="$HOME" PATH="$PATH" ${USER+"USER=$USER"} ${LOGNAME+"LOGNAME=$LOGNAME"} ${TERM+"TERM=$TERM"} ${LANG+"LANG=$LANG"} ${TMUX+"TMUX=$TMUX"} ${TMUX_PANE+"TMUX_PANE=$TMUX_PANE"} sh "$0"'
"""

# Make the teammate's place: a window `NAME` in the session `swarm-TEAM` (created if missing),
# marked with the team and member like the local tmux backend's panes; `hidden:NAME` without
# tmux. Prints the pane id.
CREATE = _TM + r"""
if ! command -v tmux >/dev/null 2>&1; then
  echo "hidden:$2"
  exit 0
fi
s="swarm-$1"
f='#{pane_id}'
hold='exec sleep 2147483647'
out=$(tm new-window -d -t "=$s:" -n "$2" -P -F "$f" sh -c "$hold" 2>/dev/null) ||
  out=$(tm new-session -d -s "$s" -n "$2" -x 200 -y 50 -P -F "$f" sh -c "$hold" 2>/dev/null) ||
  out=$(tm new-window -d -t "=$s:" -n "$2" -P -F "$f" sh -c "$hold") || exit 1
tm set-option -p -t "$out" @swarm_team "$1" \; set-option -p -t "$out" @swarm_agent "$2" \; \
  set-option -p -t "$out" remain-on-exit on >/dev/null || exit 1
echo "$out"
"""

# Start the agent: its script arrives on stdin and is kept in a private file that the script
# removes as it starts. $4 pane id (or hidden:NAME), $5 working directory, $6 the agent log
# (hidden only; '' = under ~/.swarm). Prints the agent's pid (exec all the way down: the pane's
# process is the agent).
RUN = _TM + r"""
cd -- "$5" 2>/dev/null || { echo "no directory $5 on $(uname -n)" >&2; exit 3; }
umask 077
f=$(mktemp "${TMPDIR:-/tmp}/swarm-agent.XXXXXXXX") || exit 1
cat > "$f" || { rm -f -- "$f"; exit 1; }
case $4 in
  %*)
    [ "$(tm display-message -p -t "$4" '#{pane_id} #{@swarm_team}' 2>/dev/null)" = "$4 $1" ] ||
      { rm -f -- "$f"; echo "pane $4 is not a swarm pane of team $1" >&2; exit 3; }
    tm respawn-pane -k -c "$PWD" -t "$4" sh -c "$RUN" "$f" || { rm -f -- "$f"; exit 1; }
    tm display-message -p -t "$4" '#{pane_pid}'
    ;;
  *)
    log=${6:-$HOME/.swarm/hosts-local/$1/agents/$2/agent.log}
    mkdir -p -- "$(dirname -- "$log")" || exit 1
    set -- sh -c "$RUN" "$f"
    if command -v setsid >/dev/null 2>&1; then set -- setsid "$@"; fi
    nohup "$@" </dev/null >>"$log" 2>&1 &
    echo "$!"
    ;;
esac
"""

# Close the member's pane, only when it carries our team's marker. $4 pane id.
CLOSE = _TM + r"""
case $4 in %*) ;; *) exit 0 ;; esac
[ "$(tm display-message -p -t "$4" '#{pane_id} #{@swarm_team}' 2>/dev/null)" = "$4 $1" ] || exit 0
tm kill-pane -t "$4"
"""

# Team delete: the team's session `swarm-TEAM` on that host, if there is one (its windows are
# this team's panes only). Prints how many sessions it closed.
CLOSE_TEAM = _TM + r"""
command -v tmux >/dev/null 2>&1 || { echo 0; exit 0; }
if tm has-session -t "=swarm-$1" 2>/dev/null; then
  tm kill-session -t "=swarm-$1" && echo 1 || echo 0
else
  echo 0
fi
"""

# Is the pane there and its process running? Prints yes/no. $4 pane id.
ALIVE = _TM + r"""
[ "$(tm display-message -p -t "$4" '#{pane_id} #{@swarm_team} #{pane_dead}' 2>/dev/null)" = "$4 $1 0" ] &&
  echo yes || echo no
"""

# Signal the agent: only a process whose command line is this member's `swarm agent` (a pid
# reused there since is left alone). $4 pid, $5 signal; $6 seconds before TERM becomes KILL
# ('' = no escalation), $7 its Bash command's process group ('' = none). Prints what it did.
SIGNAL = r"""
id="$2@$1" pid=$4
own() {
  case " $(ps -ww -o args= -p "$pid" 2>/dev/null) " in
    *" --agent-id $id "*) return 0 ;;
  esac
  return 1
}
if ! own; then echo gone; exit 0; fi
kill -s "$5" "$4" 2>/dev/null || { echo gone; exit 0; }
if [ -n "$6" ]; then
  n=$(($6 * 10))
  while own && [ "$n" -gt 0 ]; do sleep 0.1 2>/dev/null || sleep 1; n=$((n - 1)); done
  own && kill -s KILL "$4" 2>/dev/null
  if [ -n "$7" ]; then kill -s KILL -- "-$7" 2>/dev/null; fi
fi
echo signalled
"""

# Print the member's agent.log (follow it with $5 = -f). $4 the log ('' = under ~/.swarm).
LOGS = r"""
log=${4:-$HOME/.swarm/hosts-local/$1/agents/$2/agent.log}
[ -e "$log" ] || { [ "$5" = -f ] || exit 0; }
exec tail $5 -c +1 -- "$log"
"""

# Open the team's session on that host (with ssh -t), at the member's window ($4).
ATTACH = _TM + r"""
unset TMUX
tm select-window -t "=swarm-$1:=$4" 2>/dev/null
tm attach-session -t "=swarm-$1:"
"""

# `swarm --version` there, as a teammate would find it: $@ is the remote swarm command.
VERSION = r"""
exec env -i HOME="$HOME" PATH="$PATH" "$@" --version
"""
