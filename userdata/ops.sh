#!/bin/bash
# The ops tool of the host, <scriptDirectory>/<app>-ops (root only, run through sudo): ships
# releases of the app without a new host, rolls them back, patches the operating system and runs
# the provisioning script again (docs/operations.md).
#
# Function definitions only. The ops tool (userdata/ops-tool.ts) holds these and every other function of
# userdata/*.sh (log, die, retry, git_token, redact, ...), with the settings the first boot wrote beside it
# (<command>.conf); `npm run ops` installs it before every host action. The user data carries of this file only
# what the first boot runs (the lock). The tool holds no secret: load_secrets (provision.sh) reads them from the
# user data when an action needs them.
#
# Releases: <RELEASES_DIR>/<number>-<commit>, each a checkout of its own owned by the login user,
# with its own node_modules and a copy of the current .env; <app_dir> is a symbolic link to the
# current one, so the unit, .env and step 8 keep their paths. The first release takes over the
# first boot's checkout (a plain directory at <app_dir>) as a release, unchanged.
#
# A changing action is a state machine whose every state is the previous good one or recorded as what
# it is (docs/operations.md, "Faults"): it runs in a transient systemd unit, away from the session
# that started it (ops_unit); a switch is recorded as unverified (OPS_STATE) before <app_dir> moves,
# and as good only once the app answers; anything else that ends it (an error, a signal) puts the
# previous release back (ops_finish); a kill that leaves no chance to do so leaves the record, which
# the next action, or the next boot, settles (settle_unverified).
# shellcheck disable=SC2154 # the variables come from the rendered header

# ops_main ACTION ARGS...: root only; the hidden settle-boot, else the dispatcher that the tool renders from the
# declaration of the actions (userdata/ops-actions.ts, renderOpsDispatcher: ops_dispatch): a topology's refusal,
# then a changing action through ops_unit, any other straight to its function ops_ACTION (- as _).
ops_main() {
  ((EUID == 0)) || die "run it as root (sudo)"
  # The refresh script's, at each boot before the app starts (provision.sh: refresh_public_uris); no user's action.
  if [[ ${1:-} == settle-boot ]]; then
    settle_unverified boot
    return
  fi
  ops_dispatch "$@"
}

# ops_unit ACTION ARGS...: a changing action, run in a transient systemd unit of its own (systemd-run, OPS_RUN
# set), which a hang-up or the end of this session does not stop: this command passes its output on and ends
# with its status (--wait --pipe); in the unit, ops_change.
ops_unit() {
  [[ -n ${OPS_RUN:-} ]] || exec systemd-run --unit="$APP_NAME-ops-$$" --wait --pipe --quiet --collect --setenv=OPS_RUN=1 \
    --setenv=SUDO_USER="${SUDO_USER:-root}" -- "$OPS_COMMAND" "$@"
  ops_change "$@"
}

# check_ref ARGS...: one ref that passes the one rule (settings/git-ref.ts: REF_SHAPE, and not REF_FORBIDDEN).
check_ref() {
  [[ $# == 1 && $1 =~ $REF_SHAPE && ! $1 =~ $REF_FORBIDDEN ]] ||
    die "release takes one branch, tag or commit: letters, digits and . _ / -, starting with a letter or digit, that git check-ref-format accepts; got '$*'"
}

# release_args REF [--build-command=C] [--release-command=C] [--command-timeout=SECONDS] [--snapshot=ID]: a release's
# ref, then what `npm run ops` sends with it from the stack's settings (scripts/ops.ts, releaseWords): the build and
# release commands (settings/provisioning-settings.ts, APP_COMMAND: one line of printable characters, which bash -c
# runs as the app's user), their bound, and the snapshot taken before it. Sets REF, BUILD_COMMAND, RELEASE_COMMAND,
# COMMAND_TIMEOUT and SNAPSHOT; anything else is refused in one line.
release_args() {
  local arg LC_ALL=C
  REF='' BUILD_COMMAND='' RELEASE_COMMAND='' COMMAND_TIMEOUT=$RELEASE_COMMAND_TIMEOUT_SECONDS SNAPSHOT=''
  for arg in "${@:2}"; do
    case $arg in
      --build-command=*) BUILD_COMMAND=${arg#*=} ;;
      --release-command=*) RELEASE_COMMAND=${arg#*=} ;;
      --command-timeout=*) COMMAND_TIMEOUT=${arg#*=} ;;
      --snapshot=*) SNAPSHOT=${arg#*=} ;;
      *) check_ref "$@" ;;
    esac
  done
  check_ref "${@:1:1}"
  REF=$1
  for arg in "$BUILD_COMMAND" "$RELEASE_COMMAND"; do
    # Bytes here (LC_ALL=C), where the settings count characters: up to 4 bytes each in UTF-8.
    [[ -z $arg || ($arg =~ [^[:space:]] && $arg != *[[:cntrl:]]* && ${#arg} -le $((4 * MAX_APP_COMMAND_LENGTH))) ]] ||
      die "a build or release command must be one line of 1 to $MAX_APP_COMMAND_LENGTH printable characters; got '$(escape "$arg")'"
  done
  if ! [[ $COMMAND_TIMEOUT =~ ^[1-9][0-9]{0,5}$ ]] ||
    ((COMMAND_TIMEOUT < MIN_RELEASE_COMMAND_TIMEOUT_SECONDS || COMMAND_TIMEOUT > MAX_RELEASE_COMMAND_TIMEOUT_SECONDS)); then
    die "--command-timeout must be a whole number of seconds from $MIN_RELEASE_COMMAND_TIMEOUT_SECONDS to $MAX_RELEASE_COMMAND_TIMEOUT_SECONDS; got '$(escape "$COMMAND_TIMEOUT")'"
  fi
  [[ -z $SNAPSHOT || $SNAPSHOT =~ ^snap-([0-9a-f]{8}|[0-9a-f]{17})$ ]] || die "--snapshot must be a snapshot id (snap-…); got '$(escape "$SNAPSHOT")'"
}

# ops_change ACTION ARGS...: ACTION (in its unit) under the lock, after settling what an action cut off
# left; one audit line when it ends, whatever ends it (ops_finish).
ops_change() {
  AUDIT=$* FROM='' TO='' FAILURE='' REBOOT='' CURRENT_STEP=$1 MAIN_SUBSHELL=$BASH_SUBSHELL
  SWITCH_NEW='' BUILD='' INTERRUPTED='' IN_COMMAND='' OUTPUT_FD='' OUTPUT_PID=''
  trap 'ops_finish $?' EXIT
  trap on_error ERR
  trap 'ops_signal HUP' HUP
  trap 'ops_signal INT' INT
  trap 'ops_signal PIPE' PIPE
  trap 'ops_signal TERM' TERM
  # The ref first: before any secret, lock or clone. The audit line names the ref and the snapshot, not the commands.
  if [[ $1 == release ]]; then
    release_args "${@:2}"
    AUDIT="release $REF${SNAPSHOT:+ after snapshot $SNAPSHOT}"
  fi
  ops_lock "$(escape "$AUDIT")"
  ensure_front
  if [[ $1 == release ]]; then
    load_secrets
    # All output through redact from here on (ops_finish waits for it: the last process substitution).
    exec > >(redact >&2) 2>&1
  fi
  settle_unverified
  "ops_${1//-/_}" "${@:2}"
}

# ops_signal NAME: a signal ends the action as an error does; ops_finish puts back what it changed.
ops_signal() {
  INTERRUPTED=SIG$1
  FAILURE=${FAILURE:-interrupted by SIG$1${IN_COMMAND:+ during the $IN_COMMAND; $FROM still serves}}
  exit 1
}

# ops_finish STATUS: what ends an action, checked step by step (an error here must not cut the rest):
# a switch not verified is undone (go_back), a build that is not live is removed, then the audit line,
# the lock, and the status that ops_unit's systemd-run passes on.
ops_finish() {
  local status=$1
  trap - ERR
  # A further signal waits for the end of what follows; handled, not ignored, as the children must not inherit that.
  trap : HUP INT PIPE TERM
  set +e
  end_build
  if [[ -n $SWITCH_NEW ]]; then
    go_back "$status"
    status=$?
  fi
  if [[ -n $BUILD && $(current_release) != "${BUILD##*/}" ]]; then as_login rm -rf "$BUILD"; fi
  # Whatever serves now gets the requests (held by a restart that did not answer: restart_app).
  front_open
  rm -rf -- "${TEMP_FILES[@]}"
  local result=ok
  ((status == 0)) || result="${FAILURE:-failed} (exit $status)"
  audit_line "${SUDO_USER:-root}" "$AUDIT" "${FROM:--}" "${TO:--}" "$result"
  ops_unlock
  if [[ -n $REBOOT ]]; then systemctl reboot; fi
  # The end of redact's input (release): it writes what it holds before the unit ends.
  exec &>/dev/null
  wait
  exit "$status"
}

# go_back STATUS: after a switch to SWITCH_NEW that did not end verified, FROM serves again (<app_dir>
# back, the unit restarted and answering) and SWITCH_NEW is marked failed. Sets FAILURE and TO to what
# is true; returns 3 when FROM answers, else 1.
go_back() {
  local status=1 why=${INTERRUPTED:+was interrupted by $INTERRUPTED}
  FAILURE="$SWITCH_NEW ${why:-${FAILURE:-failed (exit $1)}}; "
  state_mark failed "$SWITCH_NEW"
  if point_app_dir "$FROM" && restart_app; then
    FAILURE+="$FROM serves again" status=3
  else
    FAILURE+="$FROM does not answer either"
  fi
  TO=$(current_release)
  log "ERROR: $FAILURE"
  return $status
}

# escape TEXT: TEXT on one line: a backslash doubled, a line break as \n, any other control character as ?.
escape() {
  local LC_ALL=C s=${1//\\/\\\\}
  s=${s//$'\n'/\\n}
  printf '%s' "${s//[[:cntrl:]]/?}"
}

# audit_line WHO WHAT FROM TO RESULT: one line in OPS_LOG, escaped (escape): when, who (through sudo),
# what, from -> to, result, and the version of the ops tool that wrote it.
audit_line() {
  local tool=${OPS_TOOL_VERSION:-unknown}
  printf '%s\n' "$(escape "$(date -u +%FT%TZ) $1 $2: $3 -> $4: $5 (tool ${tool:0:12})")" >>"$OPS_LOG"
}

# ops_lock WHAT: the one lock of the changing actions and of the provisioning script, held for this shell
# by a process of its own (flock -o running tail --pid: it ends with this shell, however it ends) whose
# last argument names the holder (tail, with no reader of its output, would end: tail -f stops on a closed pipe): the record is the lock (lock_holder). No child of this shell holds it.
# A run of the provisioning script under an action (reprovision) is under that action's lock (OPS_LOCKED).
ops_lock() {
  [[ -z ${OPS_LOCKED:-} ]] || return 0
  local fd held='' me=$BASHPID holder
  holder="$1 by ${SUDO_USER:-root} (pid $me, since $(date -u +%FT%TZ))"
  # shellcheck disable=SC2016 # expanded by sh
  exec {fd}< <(exec flock -n -E 75 -o "$OPS_LOCK" sh -c 'printf "%s\n" "$3" >"$2"; echo held; exec tail --pid="$1" -s 0.2 -f /dev/null >/dev/null' \
    ops-lock "$me" "$OPS_LOCK" "$holder" 2>/dev/null)
  read -r held <&"$fd" || true
  LOCK_PID=$!
  exec {fd}<&-
  if [[ $held != held ]]; then
    FAILURE="busy: $(lock_holder)"
    log "ERROR: $FAILURE"
    exit 75
  fi
  export OPS_LOCKED=1
}

# ops_unlock: the lock goes now, not when its holder notices the end of this shell.
ops_unlock() {
  if [[ -n ${LOCK_PID:-} ]]; then kill "$LOCK_PID" 2>/dev/null || true; fi
}

# lock_holder: who holds OPS_LOCK, read in the kernel's table of locks (/proc/locks), never by taking it:
# the holder ops_lock named; or, held by another process (a leftover of an older version of this
# command), that process and how to end it.
lock_holder() {
  local inode pid args=()
  inode=$(stat -c %i "$OPS_LOCK" 2>/dev/null) || return 0
  pid=$(awk -v i="$inode" '$2 == "FLOCK" { n = split($6, d, ":"); if (d[n] == i) { print $5; exit } }' /proc/locks)
  [[ -n $pid ]] || return 0
  mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || true
  if ((${#args[@]} > 4)) && [[ ${args[0]} == *flock && ${args[-4]} == ops-lock ]]; then
    printf '%s\n' "${args[-1]}"
  else
    pid=$({ find /proc/[0-9]*/fd -lname "$OPS_LOCK" 2>/dev/null || true; } | cut -d/ -f3 | sort -nu | xargs)
    printf 'stale: no action holds it but pid %s (%s); end it with sudo kill %s\n' "${pid:-?}" "$(ps -o args= -p "${pid// /,}" 2>/dev/null | head -n 1 || true)" "${pid:-<pid>}"
  fi
}

# The release state, OPS_STATE (root's): lines "good R" (each release that answered after its switch,
# oldest first), "failed R" (one that did not), "unverified NEW PREVIOUS WHO WHAT" (a switch from
# PREVIOUS to NEW not verified yet), "adopting R WHO WHAT" (the first boot's checkout on its way to
# release R: adopt_first_checkout).

# state_get KEY: the values of KEY's lines, oldest first.
state_get() {
  if [[ -f $OPS_STATE ]]; then sed -n "s/^$1 //p" "$OPS_STATE"; fi
}

# state_set DROP LINE: the state without its lines matching the extended regular expression DROP, and
# LINE (if any), written whole to a temporary file renamed over it.
state_set() {
  local tmp
  tmp=$(mktemp "$OPS_STATE.XXXXXX")
  TEMP_FILES+=("$tmp")
  { grep -Ev "$1" "$OPS_STATE" 2>/dev/null || true; echo "$2"; } | sed '/^$/d' >"$tmp"
  mv -f "$tmp" "$OPS_STATE"
}

# state_mark good|failed RELEASE: RELEASE answered (or did not); the unverified switch, if any, is settled.
state_mark() {
  state_set "^((good|failed) $2|unverified .*)\$" "$1 $2"
}

# last_good: the newest release older than the current one (by number) that answered after its switch:
# where a plain rollback goes, so further back each time, never forward (pruning forgets a release in the
# state before it removes it).
last_good() {
  state_get good | awk -v c="$(current_release)" '$0 < c && $0 > r { r = $0 } END { printf "%s", r }'
}

# settle_unverified [boot]: a switch that an action made and was cut off from (a kill -9, a power cut)
# before its release answered. Checked first (not at boot): the unit restarted on it, and kept (marked
# good) when it answers. Else the release before it serves again (restarted, unless at boot, where the
# refresh script runs this before the app starts: a reboot never starts an unverified release), and the
# unverified one is marked failed (a rollback to it by name checks it again). The cut-off action gets its
# audit line here, whichever way. Also finishes a cut-off adoption (settle_adoption) and removes what a
# cut-off build left.
settle_unverified() {
  local new previous who what
  settle_adoption
  rm -rf "$RELEASES_DIR/.new"
  read -r new previous who what < <(state_get unverified) || return 0
  if [[ -z ${1:-} && $(current_release) == "$new" ]] && restart_app; then
    state_mark good "$new"
    audit_line "$who" "$what" "$previous" "$new" "cut off after its switch; $new answered: kept"
    return 0
  fi
  point_app_dir "$previous"
  [[ -n ${1:-} ]] || restart_app || die "$previous does not answer"
  state_mark failed "$new"
  audit_line "$who" "$what" "$previous" "$previous" "cut off; ${1:+at boot }$previous serves, not $new"
}

# settle_adoption: an adoption of the first boot's checkout that was cut off (adopt_first_checkout):
# moved to its release, the checkout gets its <app_dir> link and is marked good; not moved yet, it stays
# the first boot's checkout (the next release adopts it). Its audit line says which.
settle_adoption() {
  local name who what
  read -r name who what < <(state_get adopting) || return 0
  if [[ ! -e $APP_DIR && -d $RELEASES_DIR/$name ]]; then point_app_dir "$name"; fi
  if [[ $(current_release) == "$name" ]]; then
    state_set "^(adopting .*|(good|failed) $name)\$" "good $name"
    audit_line "$who" "$what" - "$name" "cut off; the first boot's checkout is release $name"
  else
    state_set '^adopting ' ''
    audit_line "$who" "$what" - - "cut off; the first boot's checkout serves as it was"
  fi
}

# user_data: the user data (the provisioning script): cloud-init's root-only copy, else the metadata service's.
user_data() {
  if [[ -r $USER_DATA_COPY ]]; then zcat -f "$USER_DATA_COPY"; else metadata user-data | zcat -f; fi
}

# release_names: the kept releases (<number>-<commit>), oldest first.
release_names() {
  find "$RELEASES_DIR" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | grep -E '^[0-9]{4}-[0-9a-f]{7}$' | sort || true
}

# current_release: the release <app_dir> links to; nothing for the first boot's checkout.
current_release() {
  if [[ -L $APP_DIR ]]; then basename "$(readlink "$APP_DIR")"; fi
}

# new_release COMMIT: the name of a new release: the next number, and the commit.
new_release() {
  local last
  last=$(release_names | tail -n 1)
  last=${last%%-*}
  printf '%04d-%s' $((10#${last:-0} + 1)) "${1:0:7}"
}

# point_app_dir RELEASE: <app_dir> links to RELEASE, replaced in one rename; each step checked.
point_app_dir() {
  as_login ln -sfn "$RELEASES_DIR/$1" "$APP_DIR.ops-link" || return
  as_login mv -fT "$APP_DIR.ops-link" "$APP_DIR" || return
  [[ $(readlink "$APP_DIR") == "$RELEASES_DIR/$1" ]]
}

# answers: true when the app answers on HEALTH_PATH with an HTTP status below 500, which CODE holds (000: none).
answers() {
  CODE=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$APP_PORT$HEALTH_PATH" || true)
  ((10#$CODE >= 100 && 10#$CODE < 500))
}

# ensure_front: a single host's front (userdata/front.sh), installed or brought up to this tool's, and the public
# ports sent to it, under the action's lock: nothing changes when it is (install_front, front_firewall), so a host
# launched without it gets it at its first action. A host that cannot get it (a failed download) runs the action
# without it, and says so.
ensure_front() {
  [[ ${FRONT:-} == true ]] || return 0
  (
    trap 'rm -rf -- "${TEMP_FILES[@]}"' EXIT
    install_front
    front_firewall
  ) || log "WARNING: no front (Caddy) on this host: this action's restart fails the requests it meets (docs/operations.md)"
}

# front_hold: on a host with the front (userdata/front.sh), Caddy's new connections to the app are refused, which it
# tries again (the requests wait, FRONT_WAIT_SECONDS at most), and the requests in flight get DRAIN_SECONDS to finish.
# The hold is an element of the set held that expires after HOLD_SECONDS by itself: a kill -9 of the action cannot
# leave the app unreachable longer. Without the front (a scale-out host: its load balancer drains), nothing.
front_hold() {
  nft list set inet "${APP_NAME}_front" held >/dev/null 2>&1 || return 0
  printf '%s\n' "flush set inet ${APP_NAME}_front held" "add element inet ${APP_NAME}_front held { $APP_PORT timeout ${HOLD_SECONDS}s }" | nft -f /dev/stdin
  local deadline=$((SECONDS + DRAIN_SECONDS))
  while [[ -n $(ss -Htn state established "dport = :$APP_PORT") ]] && ((SECONDS < deadline)); do sleep 0.2; done
  log "requests held at the front"
}

# front_open: Caddy reaches the app again (the held requests go to it); nothing when nothing is held.
front_open() {
  [[ $(front_state) == held ]] || return 0
  nft flush set inet "${APP_NAME}_front" held
  log "the front passes the requests to the app again"
}

# front_state: none (no front), held or open.
front_state() {
  local set
  set=$(nft list set inet "${APP_NAME}_front" held 2>/dev/null) || { echo none; return; }
  if [[ $set == *"elements = "* ]]; then echo held; else echo open; fi
}

# restart_app: the requests held at the front (front_hold), the unit restarted, then at most HEALTH_SECONDS for an
# HTTP status below 500, and only then the front open again; fails at once when the server exits (the unit then waits
# to restart it), with the requests still held: a release that does not answer never takes one (ops_finish opens).
restart_app() {
  local unit=$APP_NAME.service deadline
  front_hold
  deadline=$((SECONDS + HEALTH_SECONDS))
  systemctl restart "$unit" || return
  while ((SECONDS < deadline)); do
    if answers; then
      log "$unit answers HTTP $CODE on $HEALTH_PATH"
      front_open
      return 0
    fi
    if [[ $(systemctl show -p SubState --value "$unit") =~ ^(auto-restart|failed)$ ]]; then
      log "the server exited with status $(systemctl show -p ExecMainStatus --value "$unit")"
      return 1
    fi
    sleep 1
  done
  log "no HTTP status below 500 within $HEALTH_SECONDS s"
  return 1
}

# copy_env FROM TO: release FROM's .env into release TO, written beside it (.env.ops) and renamed over
# TO's: a full disk or a kill leaves TO's as it was; then compared with FROM's. Refuses a FROM .env that
# the app cannot reach its database with (no DB_PASSWORD line: empty, or not a .env).
copy_env() {
  local from=$RELEASES_DIR/$1/.env to=$RELEASES_DIR/$2/.env
  grep -q '^DB_PASSWORD=.' "$from" || die "$from holds no DB_PASSWORD; not copying it"
  as_login cp -p "$from" "$to.ops"
  as_login mv -fT "$to.ops" "$to"
  cmp -s "$from" "$to"
}

# switch_release RELEASE: <app_dir> from the current release (FROM) to RELEASE, with FROM's .env, and
# the unit restarted. Recorded as unverified before <app_dir> moves, as good once the app answers;
# whatever ends the action in between puts FROM back (ops_finish, go_back: exit 3).
switch_release() {
  copy_env "$FROM" "$1"
  state_set '^unverified ' "unverified $1 $FROM $(escape "${SUDO_USER:-root}") $(escape "$AUDIT")"
  SWITCH_NEW=$1 TO=$1
  point_app_dir "$1"
  if ! restart_app; then
    FAILURE="did not answer"
    exit 3
  fi
  state_mark good "$1"
  SWITCH_NEW=''
}

# adopt_first_checkout: the first boot's checkout becomes the first release (marked good: it served).
# Recorded (adopting) before the move, which leaves no <app_dir> until the link: a kill in between is
# finished by the next action or the boot (settle_adoption).
adopt_first_checkout() {
  local name
  [[ -d $APP_DIR ]] || die "no $APP_DIR: the first boot did not get the app (see reprovision)"
  as_login mkdir -p "$RELEASES_DIR"
  name=$(new_release "$(as_login git -C "$APP_DIR" rev-parse HEAD)")
  state_set '^adopting ' "adopting $name $(escape "${SUDO_USER:-root}") $(escape "$AUDIT")"
  as_login mv -T "$APP_DIR" "$RELEASES_DIR/$name"
  point_app_dir "$name"
  state_set "^(adopting .*|(good|failed) $name)\$" "good $name"
  log "the first boot's checkout is now release $name"
}

# ops_release REF: REF (a branch, tag or commit) cloned with the token as step 8 clones, built in a
# new release while the current one serves, then switch_release. The first release takes over the
# first boot's checkout as release 0001, as it is. Then prune_releases.
ops_release() {
  release_args "$@"
  set -- "$REF"
  local sha name
  [[ -L $APP_DIR ]] || adopt_first_checkout
  FROM=$(current_release)
  check_free_space
  BUILD=$RELEASES_DIR/.new
  clone_source "$BUILD" --no-checkout
  sha=$(as_login git -C "$BUILD" rev-parse --verify --quiet "origin/$1^{commit}" || as_login git -C "$BUILD" rev-parse --verify --quiet "$1^{commit}") ||
    die "unknown ref $1; $FROM still serves"
  log "building $1 ($sha)"
  as_login git -C "$BUILD" checkout --quiet --detach "$sha"
  # As step 14 and the unit install, so that the unit's own install finds nothing to do.
  build_release "$BUILD" || die "$1 does not build; $FROM still serves"
  if [[ -n $BUILD_COMMAND$RELEASE_COMMAND ]]; then
    # The serving release's .env first: the commands see what the app will (switch_release copies it again).
    copy_env "$FROM" "${BUILD##*/}" || die "the .env of $FROM did not copy; $FROM still serves"
    run_build_command
    run_release_command
  fi
  name=$(new_release "$sha")
  as_login mv -T "$BUILD" "$RELEASES_DIR/$name"
  BUILD=$RELEASES_DIR/$name
  switch_release "$name"
  BUILD=''
  prune_releases
}

# build_release DIR: yarn install in DIR as step 14 runs it, in a process group of its own (build_group).
build_release() {
  build_group yarn_install "$1"
}

# yarn_install DIR: as step 14 and the unit install, so that the unit's own install finds nothing to do.
yarn_install() {
  cd "$1" && as_node NODE_ENV=production yarn install --ignore-engines
}

# build_group COMMAND...: COMMAND (a function too) in the background in a process group of its own (BUILD_PID,
# set -m), waited for: bash runs a trap only between commands or during wait, so a signal to the action ends it now,
# not when the build ends; ops_finish ends the group (end_build).
build_group() {
  set -m
  "$@" &
  BUILD_PID=$!
  set +m
  local status=0
  wait "$BUILD_PID" || status=$?
  BUILD_PID=''
  return "$status"
}

# end_build: the build's process group (build_group) ended, if it runs: TERM, then KILL after 5 s; then the
# output of an app command (app_command) written to its end.
end_build() {
  if [[ -n ${BUILD_PID:-} ]]; then
    kill -TERM -- "-$BUILD_PID" 2>/dev/null
    local i
    for ((i = 0; i < 50; i++)); do kill -0 -- "-$BUILD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$BUILD_PID" 2>/dev/null
    wait "$BUILD_PID" 2>/dev/null
    BUILD_PID=''
  fi
  end_output
}

# run_build_command: the stack's buildCommand, if any, in the new release (app_command).
run_build_command() {
  [[ -z $BUILD_COMMAND ]] || app_command "build command" "$BUILD_COMMAND"
}

# run_release_command: the stack's releaseCommand, if any, in the new release after its build (app_command).
run_release_command() {
  [[ -z $RELEASE_COMMAND ]] || app_command "release command" "$RELEASE_COMMAND"
}

# app_command WHAT COMMAND: COMMAND run by bash -c in the new release (BUILD) before the switch, as the login user,
# who runs the app, with the environment the app's unit gives the app (its Environment= lines, as ops_run) and none
# of root's, the release's .env beside it; no input. In a process group of its own (build_group), bounded by
# COMMAND_TIMEOUT: timeout ends the whole group (TERM, then KILL 10 s later). Its output goes to the operator and,
# line by line, to OPS_LOG (app_output). A failure or the bound ends the release: FROM still serves.
app_command() {
  local what=$1 command=$2 status=0 start=$SECONDS unit_environment environment=()
  unit_environment=$(systemctl show -p Environment --value "$APP_NAME.service") ||
    die "cannot read the environment of $APP_NAME.service for the $what; $FROM still serves"
  # systemd prints the assignments space-separated; the unit's values (validated paths) hold no space.
  read -ra environment <<<"$unit_environment"
  exec {OUTPUT_FD}> >(redact | app_output "$what")
  OUTPUT_PID=$!
  printf '$ %s\n' "$command" >&"$OUTPUT_FD"
  IN_COMMAND=$what
  build_group in_release timeout -k 10 "$COMMAND_TIMEOUT" runuser -u "$LOGIN_USER" -- env -i HOME="$LOGIN_HOME" \
    USER="$LOGIN_USER" LOGNAME="$LOGIN_USER" "${environment[@]}" bash -c "$command" || status=$?
  IN_COMMAND=''
  end_output
  ((status != 0)) || { log "$what: done in $((SECONDS - start)) s"; return 0; }
  if ((status == 124 || (status == 137 && SECONDS - start >= COMMAND_TIMEOUT))); then
    die "the $what did not end within $COMMAND_TIMEOUT s (releaseCommandTimeoutSeconds); $FROM still serves"
  fi
  die "the $what failed (exit $status); $FROM still serves"
}

# in_release COMMAND...: COMMAND, in place of this shell, in the new release's directory, with no input and its output
# to app_output: its standard output and error on the pipe, whose own descriptor is closed, so that only the command's
# processes hold it. Redirected here, not at the call: the saved descriptors of a call that a signal cuts off would
# stay open in the action and keep its output (redact) from ending.
in_release() {
  cd "$BUILD"
  exec </dev/null >&"$OUTPUT_FD" 2>&1 {OUTPUT_FD}>&-
  exec "$@"
}

# app_output WHAT: each line of an app command's output to the operator, and to OPS_LOG after a mark that no audit
# line has (its second field, who, is a user name: never |), escaped as the audit lines are.
app_output() {
  local line
  while IFS= read -r line || [[ -n $line ]]; do
    printf '%s\n' "$line" >&2
    printf '%s\n' "$(escape "$(date -u +%FT%TZ) | $AUDIT, $1: $line")" >>"$OPS_LOG"
  done
}

# end_output: the output of an app command (app_command) written to its end: its pipe closed, its writer waited for.
end_output() {
  [[ -n ${OUTPUT_FD:-} ]] || return 0
  exec {OUTPUT_FD}>&-
  # A process that left the command's group with its output open would hold the writer: 10 s at most.
  local i
  for ((i = 0; i < 100; i++)); do kill -0 "$OUTPUT_PID" 2>/dev/null || break; sleep 0.1; done
  kill "$OUTPUT_PID" 2>/dev/null || true
  wait "$OUTPUT_PID" 2>/dev/null || true
  OUTPUT_FD='' OUTPUT_PID=''
}

# check_free_space: room for a build on the releases' file system: the current release's size and FREE_MARGIN_MB more.
check_free_space() {
  local need free
  need=$(($(du -sm "$APP_DIR/" | cut -f1) + FREE_MARGIN_MB))
  free=$(($(df --output=avail -m "$RELEASES_DIR" | tail -n 1)))
  ((free >= need)) || die "$free MiB free on $RELEASES_DIR, a build needs $need (the current release's size and $FREE_MARGIN_MB); $FROM still serves"
}

# prune_releases: the newest KEEP_RELEASES releases stay, and the current one, the one before it (FROM)
# and the last known good one; each other is forgotten first (a kill while it goes leaves no good release half removed).
prune_releases() {
  local keep old
  keep=" $(current_release) $FROM $(last_good) "
  for old in $(release_names | head -n -"$KEEP_RELEASES"); do
    [[ $keep != *" $old "* ]] || continue
    state_set "^(good|failed) $old\$" ''
    as_login rm -rf "${RELEASES_DIR:?}/$old"
  done
}

# ops_rollback [RELEASE]: switch_release to RELEASE, by default the good release before the current one
# (last_good); with none, refused.
ops_rollback() {
  FROM=$(current_release)
  TO=${1:-$(last_good)}
  (($# > 0)) || [[ -n $TO ]] || die "no good release before ${FROM:-the first one}: nothing to roll back to"
  [[ $# -le 1 && -n $FROM && $TO =~ ^[0-9]{4}-[0-9a-f]{7}$ && -d $RELEASES_DIR/$TO ]] ||
    die "no release ${1:-before ${FROM:-the first one}}"
  if [[ $TO != "$FROM" ]]; then switch_release "$TO"; fi
}

# ops_releases: the kept releases, oldest first, the current one marked *.
ops_releases() {
  local name
  [[ -L $APP_DIR || ! -d $APP_DIR ]] || echo "* $APP_DIR: the first boot's checkout"
  for name in $(release_names); do
    printf '%s %s %s\n' "$([[ $name == "$(current_release)" ]] && echo '*' || echo ' ')" "$name" "$(as_login git -C "$RELEASES_DIR/$name" log -1 --format=%s)"
  done
}

# ops_restart: the app's unit restarted, then the health check (restart_app), under the lock, audited.
ops_restart() {
  (($# == 0)) || die "restart takes no arguments; got '$*'"
  FROM=$(current_release) TO=$FROM
  restart_app || die "the app does not answer after its restart"
}

# ops_db [DUMP]: a MariaDB shell on the app's database as the app user; with dump, a consistent dump of
# it (one transaction) on standard output. The password in the client's environment, never its arguments;
# on the scale-out topology, the database the header names (DB_HOST: mariadb-dump reads no MYSQL_HOST).
ops_db() {
  [[ $# == 0 || $* == dump ]] || die "db takes nothing or dump; got '$*'"
  variant SECRETS load_secrets
  local client=(mariadb)
  [[ $# == 0 ]] || client=(mariadb-dump --single-transaction)
  if [[ -n ${DB_HOST:-} ]]; then
    # Of the app's two accounts there (a rotation moves it), the one app_db_password logs in to.
    app_login || die "$(no_app_login): run db-setup (docs/scale-out.md)"
    client+=(--host="$DB_HOST" --port="$DB_PORT")
  fi
  MYSQL_PWD=$APP_DB_PASSWORD exec "${client[@]}" --user="${APP_DB_LOGIN:-$APP_DB_USER}" "$DATABASE_NAME"
}

# ops_db_setup: the scale-out topology's database set up with its master user's credentials, which only
# this action reads, on standard input (`npm run ops -- <stack> db-setup` sends RDS's secret there): the
# database and the app's account for app_db_password (db_setup_scale_out, userdata/remote-database.sh).
# The hosts hold no administrator's secret; run it after the first apply and after each rotation. The
# dispatcher refuses it on a single host (userdata/ops-actions.ts).
ops_db_setup() {
  (($# == 0)) || die "db-setup takes no arguments; got '$*'"
  db_setup_scale_out
}

# ops_run COMMAND...: the operator's one-off command in <app_dir> (the serving release), as the login user, who
# runs the app, with the environment the app's unit gives it (its Environment= lines, read from systemd) and none of
# root's; the app's .env stays the app's to read. Standard input, output and the terminal are the session's, so
# `run node` is a REPL. The exit status is the command's. Not under the lock: it neither waits for an action nor
# holds one up. The audit log gets a line when it starts (a kill leaves that one, truthfully unfinished) and one
# with its exit; both name the command, never the environment.
ops_run() {
  (($# > 0)) || die "run takes a command: npm run ops -- <stack> run -- <command...>"
  local release status=0 unit_environment environment=()
  [[ -d $APP_DIR ]] || die "no $APP_DIR: the app is not deployed on this host"
  # systemd prints the assignments space-separated; the unit's values (validated paths) hold no space.
  unit_environment=$(systemctl show -p Environment --value "$APP_NAME.service") ||
    die "cannot read the environment of $APP_NAME.service"
  read -ra environment <<<"$unit_environment"
  release=$(current_release)
  audit_line "${SUDO_USER:-root}" "run $*" "${release:--}" "${release:--}" started
  cd "$APP_DIR"
  runuser -u "$LOGIN_USER" -- env -i HOME="$LOGIN_HOME" USER="$LOGIN_USER" LOGNAME="$LOGIN_USER" TERM="${TERM:-dumb}" \
    "${environment[@]}" "$@" || status=$?
  audit_line "${SUDO_USER:-root}" "run $*" "${release:--}" "${release:--}" "exit $status"
  # exit, not return: a command's failure is its status, not an error of this tool (no FAILED line).
  exit "$status"
}

# os_release: the operating system's release (Amazon Linux 2023: with its date).
os_release() {
  sed -n 's/^PRETTY_NAME=//p' /etc/os-release
}

# ops_status: the release (and whether it is verified), the unit, the app's answer, the front, the lock (read, never
# taken) and the last actions; exit 1 when the app does not answer below 500.
ops_status() {
  local ok=0 new previous holder
  answers || ok=1
  echo "tool: ${OPS_TOOL_VERSION:0:12}"
  echo "release: $(readlink "$APP_DIR" || echo "$APP_DIR")"
  echo "front: $(front_state)"
  if read -r new previous _ < <(state_get unverified); then echo "unverified: $new; the next action keeps it if it answers, else puts $previous back, as a boot does"; fi
  if read -r new _ < <(state_get adopting); then echo "adopting: the first boot's checkout as $new; the next action or a boot finishes it"; fi
  systemctl show -p ActiveState -p SubState -p MainPID "$APP_NAME.service"
  echo "answer: HTTP $CODE on $HEALTH_PATH"
  holder=$(lock_holder)
  [[ -z $holder ]] || echo "lock: $holder"
  # The last actions: their audit lines, not an app command's output (app_output).
  grep -v '^[^ ]* | ' "$OPS_LOG" 2>/dev/null | tail -n 5 || true
  return $ok
}

# ops_patch [VERSION]: operating-system updates as Amazon Linux 2023 takes them (its repositories are
# locked to the AMI's release): the newest release reported, dnf upgrade to VERSION (default latest),
# then a reboot only when dnf needs-restarting says so; otherwise the app must answer.
ops_patch() {
  [[ ${1:-latest} =~ ^(latest|[0-9.]+)$ ]] || die "patch takes latest or a release such as 2023.9.20251117"
  local needs
  FROM=$(os_release)
  dnf check-release-update || true
  retry "dnf upgrade" dnf -y upgrade --releasever="${1:-latest}"
  TO=$(os_release)
  if ! needs=$(dnf needs-restarting -r 2>&1) && [[ $needs == *"Reboot is required"* ]]; then
    log "$needs: rebooting"
    REBOOT=1 TO+=" (reboot)"
  elif ! answers; then
    restart_app || die "the app does not answer after the updates"
  fi
}

# ops_reprovision: the user data (the provisioning script) run again as cloud-init ran it, under this
# action's lock (OPS_LOCKED): the repair of a failed first boot; on a healthy host it changes
# nothing the first run settled.
ops_reprovision() {
  (($# == 0)) || die "reprovision takes no arguments; got '$*'"
  local script
  FROM=$(current_release)
  script=$(user_data)
  [[ $script == '#!/bin/bash'* ]] || die "the user data is not the provisioning script"
  bash <(printf '%s\n' "$script")
  TO=$(current_release)
}

# ops_rotate_secrets: applies the Parameter Store values after `npm run secrets -- <stack> rotate`
# (rotate_secrets_parameter_store, userdata/parameter-store.sh, which only that mode's user data holds).
ops_rotate_secrets() {
  variant SECRETS rotate_secrets
}

rotate_secrets_user_data() {
  die "rotate-secrets needs \"secrets\": \"parameter-store\""
}
