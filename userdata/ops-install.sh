#!/bin/bash
# The ops tool's installer: `sudo -n bash -c '<this>' ops-install VERSION COMMAND LOCK LOG WHO`, the tool on
# standard input (scripts/ops.ts, before every host action; userdata/ops-tool.ts puts the functions it calls in
# front of it: log, escape, audit_line, ops_lock, ops_unlock, lock_holder, settings_text). It prints VERSION when
# COMMAND is that version already; else, under the ops lock (busy: exit 75, naming the holder; beside a first boot, which
# holds it for its whole run and never runs the tool: under the installers' own lock only), it writes the tool
# beside COMMAND, checks its sha256, and renames it over COMMAND, then prints "OLD VERSION" and writes an audit line.
# A cut-off standard input, a full disk or a kill at any line leaves COMMAND as it was. An older host's COMMAND
# (no version line, no configuration: the ops command its first boot wrote) gives the configuration first.
# shellcheck disable=SC2034 # OPS_TOOL_VERSION, LOG_TAG and MAIN_SUBSHELL: the functions' (audit_line, log, ops_lock)
set -Eeuo pipefail
shopt -s inherit_errexit
VERSION=$1 OPS_COMMAND=$2 OPS_LOCK=$3 OPS_LOG=$4 SUDO_USER=$5
OPS_TOOL_VERSION=$VERSION LOG_TAG=ops-install MAIN_SUBSHELL=0 FAILURE='' TMP='' OLD=''
# Standard error as it came: finish writes there even when it ends a command whose errors go elsewhere (ops_lock's).
exec 3>&2

# installed: the version of COMMAND (its second line), legacy-<sha256, 12 digits> for an older host's command, or none.
installed() {
  local version
  [[ -f $OPS_COMMAND ]] || { echo none; return; }
  version=$(sed -n '2s/^OPS_TOOL_VERSION=\([0-9a-f]\{64\}\)$/\1/p' "$OPS_COMMAND")
  if [[ -n $version ]]; then echo "$version"; else echo "legacy-$(sha256sum <"$OPS_COMMAND" | cut -c1-12)"; fi
}

# short VERSION: as people read it: a sha256's first 12 digits.
short() {
  if [[ $1 =~ ^[0-9a-f]{64}$ ]]; then printf '%s' "${1:0:12}"; else printf '%s' "$1"; fi
}

# finish: what ends a run that did not install: one line naming both versions and why, the audit line.
finish() {
  local status=$?
  rm -f -- "$TMP"
  if ((status != 0)); then
    printf 'ops-install: the host keeps its tool %s, not updated to %s: %s\n' "$(short "$OLD")" "$(short "$VERSION")" "${FAILURE:-failed (exit $status)}" >&3
    [[ $FAILURE == busy:* ]] || audit_line "$SUDO_USER" install-tool "$(short "$OLD")" "$(short "$VERSION")" "${FAILURE:-failed} (exit $status)" 2>/dev/null || true
  fi
  ops_unlock
}

fail() {
  FAILURE=$1
  exit 1
}

OLD=$(installed)
if [[ $OLD == "$VERSION" ]]; then
  cat >/dev/null
  echo "$VERSION"
  exit 0
fi
trap finish EXIT
# One install at a time, whoever holds the ops lock: the installers' own lock beside it.
exec {INSTALLING}>>"$OPS_LOCK.install"
flock -n "$INSTALLING" || { FAILURE="busy: another install of the tool"; exit 75; }
# The first boot holds the ops lock for its whole run (a scale-out host's while it waits at step 4 for db-setup,
# which needs this tool). It never runs the tool, and no action runs while it holds the lock: the tool goes in beside it.
if [[ $(lock_holder) != "provision by "* ]]; then ops_lock install-tool 2>/dev/null; fi
# Under the lock: another run may have installed it meanwhile.
OLD=$(installed)
if [[ $OLD == "$VERSION" ]]; then
  cat >/dev/null
  echo "$VERSION"
  exit 0
fi
rm -f -- "$OPS_COMMAND".install-?????? "$OPS_COMMAND".conf.install-??????  # a killed run's
# An older host's command holds its settings (readonly -p) and its functions, and ends with ops_main "$@": its
# settings become the configuration, as the first boot now writes it (settings_text), before the tool replaces it.
if [[ ! -e $OPS_COMMAND.conf && $OLD == legacy-* ]]; then
  TMP=$(mktemp "$OPS_COMMAND.conf.install-XXXXXX")
  # shellcheck disable=SC1090 # the older command, without its last line
  (source <(head -n -1 "$OPS_COMMAND") && settings_text) >"$TMP" 2>/dev/null ||
    fail "could not read the settings of the older command $OPS_COMMAND"
  grep -q '^declare -r APP_NAME=' "$TMP" || fail "the older command $OPS_COMMAND holds no settings"
  chmod 600 "$TMP"
  sync "$TMP"
  mv -f "$TMP" "$OPS_COMMAND.conf"
fi
[[ -f $OPS_COMMAND.conf ]] || fail "no $OPS_COMMAND.conf: the host's first boot did not start (or the stack's settings name another command)"
TMP=$(mktemp "$OPS_COMMAND.install-XXXXXX" 2>&1) || { error=$TMP TMP=''; fail "writing it failed: ${error##*: }"; }
if ! error=$(cat 2>&1 >"$TMP"); then fail "writing it failed: ${error##*: }"; fi
[[ $(sed -n 2p "$TMP") == "OPS_TOOL_VERSION=$VERSION" && $(tail -n +3 "$TMP" | sha256sum | cut -d' ' -f1) == "$VERSION" ]] ||
  fail "what arrived is not that version (cut off?)"
chmod 700 "$TMP"
sync "$TMP" || fail "writing it failed: sync"
mv -f "$TMP" "$OPS_COMMAND"
TMP=''
audit_line "$SUDO_USER" install-tool "$(short "$OLD")" "$(short "$VERSION")" ok || true
echo "$OLD $VERSION"
