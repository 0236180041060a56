#!/bin/bash
# systemd-run --wait --pipe: the transient unit in a session (and process group) of its own, with the
# machine's environment and the --setenv variables only, the caller's standard input, output and error,
# and none of its ignored signals; it waits for the unit and exits with its status. A hang-up of the
# caller ends this wait, not the unit. UNITS_DIR/<name> holds the unit's pid.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record systemd-run "$@"
unit='' envs=()
while (($#)); do
  case $1 in
    --unit=*) unit=${1#--unit=} ;;
    --setenv=*) envs+=("${1#--setenv=}") ;;
    --) shift; break ;;
    --*) ;;
    *) break ;;
  esac
  shift
done
mkdir -p "$UNITS_DIR"
# As systemd starts a unit: every signal's default action (a job started with & ignores SIGINT).
setsid env --default-signal -i PATH="$PATH" LANG="$LANG" TMPDIR="$TMPDIR" GIT_SSL_CAINFO="$GIT_SSL_CAINFO" "${envs[@]}" "$@" &
echo $! >"$UNITS_DIR/$unit"
wait $!
