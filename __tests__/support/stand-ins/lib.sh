# shellcheck shell=bash
# Sourced by every stand-in of the provisioning harness (__tests__/support/provisioning-harness.ts):
# the harness's values (config.sh, which the harness writes beside this file when it copies the
# stand-ins into its own directory: __tests__/support/harness/stand-in-commands.ts) and the helpers
# they share.
# shellcheck source=/dev/null
source "${BASH_SOURCE[0]%/*}/config.sh"

# record NAME ARGS...: one line `NAME ARGS...` in the harness's log of calls.
record() {
  local name=$1
  shift
  printf '%s\n' "$name${*:+ $*}" >>"$CALLS"
}

# fault NAME: true when the test armed NAME (see FAULTS in the harness).
fault() { [[ -f $FAULT_FILE && $(<"$FAULT_FILE") == "$1" ]]; }

# fail NAME: when NAME is armed, says so and exits 1.
fail() {
  if fault "$1"; then
    echo "injected fault: $1" >&2
    exit 1
  fi
}

# kill_script: SIGKILL to the process group of the script under test (a power cut, as far as it can tell):
# the group of its session's leader (the script, or the ops command's action), then this process's own
# (the same, or the action's build, which runs in a group of its own).
kill_script() {
  local st
  read -r -a st </proc/$$/stat
  kill -KILL -- "-${st[5]}" 2>/dev/null || true
  kill -KILL -- "-${st[4]}"
}
