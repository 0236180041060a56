#!/bin/bash
# The stand-in yarn: records its call and the directory it ran in; fails when step 14's fault is armed,
# and on a package.json that is not JSON, as the real one does.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "${BASH_SOURCE[0]%/*}/lib.sh"
printf '%s\n' "yarn $* (in $PWD${NODE_ENV:+, NODE_ENV=$NODE_ENV})" >>"$CALLS"
if fault step_14_install_dependencies; then
  echo "injected fault" >&2
  exit 1
fi
# The ops command's build: killed (the action and its build), slow, a process left behind, or the login user's file system filled.
if fault ops:kill-build; then kill_script; fi
# A build that takes 30 s (its pid in <dir>/build.pid): what a signal to the action must not wait for.
if fault ops:slow-build; then
  echo $$ >"${CALLS%/*}/build.pid"
  sleep 30
fi
if fault ops:leave-child; then
  setsid sleep 300 </dev/null >/dev/null 2>&1 &
  echo $! >"${CALLS%/*}/leftover.pid"
fi
if fault ops:fill-build; then dd if=/dev/zero of="$HOME/filler" bs=64k 2>/dev/null || true; fi
if [[ -f package.json ]] && ! python3 -m json.tool package.json >/dev/null 2>&1; then
  echo "error package.json: invalid JSON" >&2
  exit 1
fi
