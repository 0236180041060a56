#!/bin/bash
# The app's unit (the app mode), as systemd runs it (bin/systemctl.sh runs this): a supervisor in a
# session of its own that runs server.js in the unit's WorkingDirectory (APP_DIR, resolved at each
# start) with NODE on APP_PORT and NODE_ENV=production, and starts it again RESTART_SEC after it exits
# (Restart=always); `show -p NAME [-p NAME] [--value]` reports SubState (running, auto-restart, dead),
# ActiveState, MainPID, ExecMainStatus and NRestarts from its state files in APP_STATE, and Environment from the unit.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "${BASH_SOURCE[0]%/*}/lib.sh"
state=$APP_STATE
mkdir -p "$state"
value() { cat "$state/$1" 2>/dev/null || echo "$2"; }
stop() {
  local pid
  pid=$(value pid '')
  if [[ -n $pid ]]; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$state/pid"
  fi
  echo dead >"$state/SubState"
}
case $1 in
  stop) stop ;;
  start | restart)
    if [[ $1 == start && -n $(value pid '') ]] && kill -0 "$(value pid '')" 2>/dev/null; then exit 0; fi
    stop
    # The unit's start: its own session, none of the caller's descriptors (nor the ops lock, fd 9).
    # shellcheck disable=SC2016 # expanded by the supervisor's own bash
    setsid bash -c '
      state=$1
      while :; do
        echo running >"$state/SubState"
        (cd -P "$2" && PORT=$3 NODE_ENV=production exec "$4" server.js) &
        echo $! >"$state/MainPID"
        wait $! && status=0 || status=$?
        echo "$status" >"$state/ExecMainStatus"
        echo $(($(cat "$state/NRestarts" 2>/dev/null || echo 0) + 1)) >"$state/NRestarts"
        echo auto-restart >"$state/SubState"
        sleep "$5"
      done' app-unit "$state" "$APP_DIR" "$APP_PORT" "$NODE" "$RESTART_SEC" \
      </dev/null >>"$state/app.log" 2>&1 9>&- &
    echo $! >"$state/pid"
    ;;
  show)
    shift
    names=() plain=1
    while (($# > 1)); do
      case $1 in -p) names+=("$2"); shift 2 ;; --value) plain=0; shift ;; *) shift ;; esac
    done
    for name in "${names[@]}"; do
      case $name in
        SubState) v=$(value SubState dead) ;;
        ActiveState) case $(value SubState dead) in running) v=active ;; auto-restart) v=activating ;; *) v=inactive ;; esac ;;
        MainPID) v=$(value MainPID 0) ;;
        # As systemd prints it: the unit's Environment= assignments, space-separated.
        Environment) v=$(sed -n 's/^Environment=//p' "$UNIT_DIRECTORY/$APP_SERVICE" | paste -sd ' ') ;;
        *) v=$(value "$name" 0) ;;
      esac
      if ((plain)); then echo "$name=$v"; else echo "$v"; fi
    done
    ;;
esac
