#!/bin/bash
# The ops command of the host, <scriptDirectory>/<app>-ops (root only, run through sudo): ships
# releases of the app without a new host, rolls them back, patches the operating system and runs
# the provisioning script again (docs/operations.md).
#
# Function definitions only. This file goes into the user data as a module (userdata/script.ts,
# scriptModules), between the header and provision.sh, whose install_command writes every function
# of the script (these and its own helpers: log, die, retry, git_token, redact, ...) and its settings
# into the command before step 1. The command holds no secret: load_secrets (provision.sh) reads them
# from the user data when an action needs them.
#
# Releases: <RELEASES_DIR>/<number>-<commit>, each a checkout of its own owned by the login user,
# with its own node_modules and a copy of the current .env; <app_dir> is a symbolic link to the
# current one, so the unit, .env and step 8 keep their paths. The first release takes over the
# first boot's checkout (a plain directory at <app_dir>) as a release, unchanged.
#
# A changing action is a state machine whose every state is the previous good one or recorded as what
# it is (docs/operations.md, "Faults"): it runs in a transient systemd unit, away from the session
# that started it (ops_detach); a switch is recorded as unverified (OPS_STATE) before <app_dir> moves,
# and as good only once the app answers; anything else that ends it (an error, a signal) puts the
# previous release back (ops_finish); a kill that leaves no chance to do so leaves the record, which
# the next action, or the next boot, settles (settle_unverified, settle_at_boot).
# shellcheck disable=SC2154 # the variables come from the rendered header

# ops_main ACTION ARGS...: the dispatcher.
ops_main() {
  ((EUID == 0)) || die "run it as root (sudo)"
  case ${1:-} in
    release | rollback | patch | reprovision | rotate-secrets)
      if [[ -n ${OPS_RUN:-} ]]; then ops_change "$@"; else ops_detach "$@"; fi ;;
    releases | status) "ops_$1" "${@:2}" ;;
    *) die "usage: $OPS_COMMAND release REF|rollback [RELEASE]|releases|status|patch [VERSION]|reprovision|rotate-secrets" ;;
  esac
}

# ops_detach ACTION ARGS...: ACTION in a transient systemd unit of its own (systemd-run), where no
# hang-up, closed output or signal of this session reaches it; this command shows the action's log
# (OPS_RUNS/<run>.log) as it grows and ends with the action's status. Cut off, it leaves the action
# running to its end, which the audit log and status tell.
ops_detach() {
  local run log
  run=$(date -u +%Y%m%dT%H%M%SZ)-$$
  log=$OPS_RUNS/$run.log
  (umask 077 && mkdir -p "$OPS_RUNS" && : >"$log")
  # A run's files (.log, .pid, .status) stay 30 days.
  find "$OPS_RUNS" -type f -mtime +30 -delete
  systemd-run --unit="$APP_NAME-ops-$run" --collect --quiet --setenv=OPS_RUN="$run" --setenv=SUDO_USER="${SUDO_USER:-root}" \
    -- "$OPS_COMMAND" "$@"
  for _ in {1..300}; do
    [[ -s $OPS_RUNS/$run.pid ]] && break
    sleep 0.1
  done
  tail -n +1 -s 0.2 -f --pid="$(<"$OPS_RUNS/$run.pid")" "$log"
  [[ -s $OPS_RUNS/$run.status ]] || die "no result (killed?); see status"
  exit "$(<"$OPS_RUNS/$run.status")"
}

# ops_change ACTION ARGS...: ACTION (in its unit) under the lock, after settling what an action cut off
# left; one audit line when it ends, whatever ends it (ops_finish).
ops_change() {
  AUDIT=$* FROM='' TO='' FAILURE='' REBOOT='' CURRENT_STEP=$1 MAIN_SUBSHELL=$BASH_SUBSHELL
  SWITCH_NEW='' SWITCH_PREVIOUS='' SWITCH_FAILURE='' BUILD='' LOCKED='' INTERRUPTED='' REDACT_PID=''
  RUN_LOG=$OPS_RUNS/$OPS_RUN.log
  exec >>"$RUN_LOG" 2>&1 </dev/null
  trap 'ops_finish $?' EXIT
  trap on_error ERR
  local signal
  for signal in HUP INT PIPE TERM; do
    # shellcheck disable=SC2064 # the name, now
    trap "ops_signal $signal" "$signal"
  done
  write_file "$OPS_RUNS/$OPS_RUN.pid" "$$"
  if [[ $1 == release ]]; then
    load_secrets
    # All output through redact (to the run's log) from here on.
    exec > >(redact >&2) 2>&1
    REDACT_PID=$!
    check_release_ref "${@:2}"
  fi
  ops_lock "$(escape "$*")"
  settle_unverified
  "ops_${1//-/_}" "${@:2}"
}

# ops_signal NAME: a signal ends the action as an error does; ops_finish puts back what it changed.
ops_signal() {
  INTERRUPTED=SIG$1
  exit $((128 + $(kill -l "$1")))
}

# ops_finish STATUS: what ends an action, checked step by step (an error here must not cut the rest):
# a switch not verified is undone (go_back), a build that is not live is removed, then the audit line,
# the status for ops_detach, and the lock.
ops_finish() {
  local status=$1
  trap - ERR
  # A further signal waits for the end of what follows; handled, not ignored, as the children must not inherit that.
  trap : HUP INT PIPE TERM
  set +e
  if [[ -n $SWITCH_NEW ]]; then
    go_back "$status"
    status=$?
  fi
  if [[ -n $BUILD && $(current_release) != "${BUILD##*/}" ]]; then as_login rm -rf "$BUILD"; fi
  rm -f -- "${TEMP_FILES[@]}"
  if [[ -n $REDACT_PID ]]; then
    exec >>"$RUN_LOG" 2>&1
    wait "$REDACT_PID"
  fi
  local result=ok
  ((status == 0)) || result="${FAILURE:-failed} (exit $status)"
  audit_line "${SUDO_USER:-root}" "$AUDIT" "${FROM:--}" "${TO:--}" "$result"
  write_file "$OPS_RUNS/$OPS_RUN.status" "$status"
  ops_unlock
  if [[ -n $REBOOT ]]; then systemctl reboot; fi
  exit "$status"
}

# go_back STATUS: after a switch to SWITCH_NEW that did not end verified, SWITCH_PREVIOUS serves again
# (<app_dir> back, the unit restarted and answering) and SWITCH_NEW is marked failed. Sets FAILURE and
# TO to what is true; returns 3 when SWITCH_PREVIOUS answers, else 1.
go_back() {
  local why=${SWITCH_FAILURE:-${INTERRUPTED:+was interrupted by $INTERRUPTED}} status=1
  FAILURE="$SWITCH_NEW ${why:-failed (exit $1${FAILURE:+: $FAILURE})}; "
  log "back to $SWITCH_PREVIOUS"
  state_mark failed "$SWITCH_NEW"
  if point_app_dir "$SWITCH_PREVIOUS" && restart_app; then
    FAILURE+="$SWITCH_PREVIOUS serves again" status=3
  else
    FAILURE+="back to $SWITCH_PREVIOUS, which does not answer either"
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

# audit_line WHO WHAT FROM TO RESULT: one line in OPS_LOG, each field escaped (escape): when, who
# (through sudo), what, from -> to, result.
audit_line() {
  printf '%s %s %s: %s -> %s: %s\n' "$(date -u +%FT%TZ)" "$(escape "$1")" "$(escape "$2")" "$(escape "$3")" "$(escape "$4")" \
    "$(escape "$5")" >>"$OPS_LOG"
}

# write_file PATH TEXT: PATH holds TEXT and a line break, whole or not at all (a temporary file renamed over it).
write_file() {
  local tmp
  tmp=$(mktemp "$1.XXXXXX") && TEMP_FILES+=("$tmp") && printf '%s\n' "$2" >"$tmp" && mv -f "$tmp" "$1"
}

# The lock of the changing actions and of the provisioning script is a symbolic link, OPS_LOCK, whose
# target names its holder: created in one step with its holder (ln -s fails when it exists), held by
# no descriptor, so no process the action leaves behind holds it. Its holder is the action's shell,
# known by its process id, start time and boot: a holder that is gone (a kill -9, a reboot) is stale,
# and the next action takes the lock over.

# holder_alive HOLDER: true when the process that HOLDER names still runs.
holder_alive() {
  [[ $1 =~ \(pid\ ([0-9]+\ started\ [0-9]+), ]] && [[ $(proc_start "${BASH_REMATCH[1]% *}") == "${BASH_REMATCH[1]}" ]]
}

# proc_start PID: "PID started TIME", TIME when the process started (clock ticks after boot; "-" when gone).
proc_start() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || stat='x) ---------------------- -'
  read -r -a stat <<<"${stat##*) }"
  printf '%s started %s' "$1" "${stat[19]}"
}

# ops_lock WHAT: takes the lock for WHAT, or exits 75 naming its live holder. A run of the provisioning
# script that the holder starts (reprovision) finds its holder in OPS_LOCK_HOLDER, and goes on under it.
ops_lock() {
  local holder mine guard
  if [[ -n ${OPS_LOCK_HOLDER:-} && $(readlink "$OPS_LOCK" 2>/dev/null) == "$OPS_LOCK_HOLDER" ]]; then return 0; fi
  mine="$1 by ${SUDO_USER:-root} (pid $(proc_start $$), since $(date -u +%FT%TZ))"
  # Taking over a stale lock is a test and a change: one action at a time, under a short flock (closed
  # before anything else runs).
  exec {guard}>>"$OPS_LOCK.guard"
  flock -w 30 "$guard"
  holder=$(readlink "$OPS_LOCK" 2>/dev/null) || holder=''
  if [[ -n $holder ]] && holder_alive "$holder"; then
    exec {guard}>&-
    FAILURE="busy: $holder"
    log "ERROR: $FAILURE"
    exit 75
  fi
  # The line of the action that held it, unless it was cut off after a switch (settle_unverified writes that one).
  if [[ -n $holder && -z $(state_get unverified) ]]; then audit_line - "$holder" - - "cut off (taken over by $1)"; fi
  # A lock file of an older version of this command (a plain file) goes too.
  rm -f "$OPS_LOCK"
  ln -s "$mine" "$OPS_LOCK"
  exec {guard}>&-
  LOCKED=$mine
  export OPS_LOCK_HOLDER=$mine
}

# ops_unlock: frees the lock if this run took it (no other can take it while this run lives).
ops_unlock() {
  if [[ -n ${LOCKED:-} ]]; then rm -f "$OPS_LOCK"; fi
}

# The release state, OPS_STATE (root's): lines "good R" (each release that answered after its switch,
# oldest first), "failed R" (one that did not), "unverified NEW PREVIOUS WHO WHAT" (a switch from
# PREVIOUS to NEW not verified yet). Each change writes it whole (write_file).

# state_get KEY: the values of KEY's lines, oldest first.
state_get() {
  if [[ -f $OPS_STATE ]]; then sed -n "s/^$1 //p" "$OPS_STATE"; fi
}

# state_set DROP LINE: the state without its lines matching the extended regular expression DROP, and LINE (if any).
state_set() {
  local kept=''
  if [[ -f $OPS_STATE ]]; then kept=$(grep -Ev "$1" "$OPS_STATE") || [[ $? == 1 ]] || return; fi
  write_file "$OPS_STATE" "$(printf '%s\n%s' "$kept" "$2" | sed '/^$/d')"
}

# state_mark good|failed RELEASE: RELEASE answered (or did not); the unverified switch, if any, is settled.
state_mark() {
  state_set "^((good|failed) $2|unverified .*)\$" "$1 $2"
}

# last_good: the newest release that answered after its switch, other than the current one, still there.
last_good() {
  local name current
  current=$(current_release)
  while IFS= read -r name; do
    if [[ -n $name && $name != "$current" && -d $RELEASES_DIR/$name ]]; then
      printf '%s' "$name"
      return 0
    fi
  done < <(state_get good | tac)
}

# settle_unverified: a switch that an action made and was cut off from (a kill -9, a power cut) before
# its release answered: verified now (a restart that answers), else the release before it serves again.
# The cut-off action gets its audit line. Also removes what cut-off builds and prunes left.
settle_unverified() {
  local new previous who what
  rm -rf "$RELEASES_DIR"/.new "$RELEASES_DIR"/.prune-*
  read -r new previous who what < <(state_get unverified) || return 0
  if [[ $(current_release) == "$new" ]] && restart_app; then
    state_mark good "$new"
    audit_line "$who" "$what" "$previous" "$new" "cut off before its check; $new answers"
    return 0
  fi
  point_app_dir "$previous"
  restart_app || die "$new does not answer, nor does $previous"
  state_mark failed "$new"
  audit_line "$who" "$what" "$previous" "$previous" "cut off before its check; $new did not answer; $previous serves again"
}

# settle_at_boot: run at each boot before the app starts (the refresh script): a switch that was never
# verified does not start; the release before it serves.
settle_at_boot() {
  local new previous who what
  read -r new previous who what < <(state_get unverified) || return 0
  point_app_dir "$previous"
  state_set '^unverified ' ''
  audit_line "$who" "$what" "$previous" "$previous" "cut off before its check; at boot $previous serves, not $new"
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

# restart_app: restarts the unit, then waits at most HEALTH_SECONDS for an HTTP status below 500;
# fails at once when the server exits (the unit then waits to restart it).
restart_app() {
  local unit=$APP_NAME.service deadline=$((SECONDS + HEALTH_SECONDS))
  systemctl restart "$unit" || return
  while ((SECONDS < deadline)); do
    if answers; then
      log "$unit answers HTTP $CODE on $HEALTH_PATH"
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

# copy_env FROM TO: release FROM's .env into release TO, written beside it, then renamed over TO's: a full
# disk or a kill leaves TO's as it was; then compared with FROM's. Refuses a FROM .env that the app cannot
# reach its database with (without the three lines step 11 writes: empty, or not a .env).
copy_env() {
  local from=$RELEASES_DIR/$1/.env to=$RELEASES_DIR/$2/.env tmp
  [[ $(grep -cE '^DB_(USER|PASSWORD|NAME)=.' "$from") == 3 ]] || die "$from lacks DB_USER, DB_PASSWORD or DB_NAME; not copying it"
  tmp=$(as_login mktemp "$to.ops-XXXXXX")
  TEMP_FILES+=("$tmp")
  as_login cp -p "$from" "$tmp"
  as_login mv -fT "$tmp" "$to"
  cmp -s "$from" "$to"
}

# switch_release RELEASE: <app_dir> from the current release (FROM) to RELEASE, with FROM's .env, and
# the unit restarted. Recorded as unverified before <app_dir> moves, as good once the app answers;
# whatever ends the action in between puts FROM back (ops_finish, go_back: exit 3).
switch_release() {
  copy_env "$FROM" "$1"
  state_set '^unverified ' "unverified $1 $FROM $(escape "${SUDO_USER:-root}") $(escape "$AUDIT")"
  SWITCH_NEW=$1 SWITCH_PREVIOUS=$FROM TO=$1
  point_app_dir "$1"
  if ! restart_app; then
    SWITCH_FAILURE="did not answer"
    exit 3
  fi
  state_mark good "$1"
  SWITCH_NEW=''
}

# check_release_ref REF: REF is a branch or tag the source has, or a commit id (checked after the clone):
# one bounded git ls-remote before the lock, so that a stuck source holds nothing.
check_release_ref() {
  [[ $# == 1 && $1 =~ ^[A-Za-z0-9][A-Za-z0-9._/-]*$ ]] || die "release takes a branch, a tag or a commit; got '$*'"
  [[ $1 =~ ^[0-9a-f]{7,40}$ ]] || source_git ls-remote --exit-code --quiet "$REPO_URL" "$1" >/dev/null ||
    die "unknown ref $1, or no answer from the source; nothing changed"
}

# source_git ARGS...: git_token with bounded waits: a transfer under 1 KB/s for SOURCE_LOW_SPEED_SECONDS
# stops, and the whole command at SOURCE_TIMEOUT_SECONDS (a source that accepts and never answers).
source_git() {
  LOGIN_TIMEOUT=$SOURCE_TIMEOUT_SECONDS git_token -c http.lowSpeedLimit=1000 -c "http.lowSpeedTime=$SOURCE_LOW_SPEED_SECONDS" "$@"
}

# check_free_space: the releases' file system holds a copy of the current release and FREE_MARGIN_MIB more.
check_free_space() {
  local free need
  free=$(($(df --output=avail -m "$RELEASES_DIR" | tail -n 1)))
  need=$(du -sm "$RELEASES_DIR/$FROM" | cut -f1)
  ((free >= need + FREE_MARGIN_MIB)) || die "$free MiB free; a release needs $need MiB and $FREE_MARGIN_MIB more; $FROM still serves"
}

# adopt_first_checkout: the first boot's checkout becomes release 0001 (marked good: it served). A kill
# between its move and the link leaves no <app_dir>: the next run finds the release and links it.
adopt_first_checkout() {
  local name=''
  if [[ -d $APP_DIR ]]; then
    as_login mkdir -p "$RELEASES_DIR"
    name=$(new_release "$(as_login git -C "$APP_DIR" rev-parse HEAD)")
    state_set '^adopting ' "adopting $name"
    as_login mv -T "$APP_DIR" "$RELEASES_DIR/$name"
  fi
  name=${name:-$(state_get adopting)}
  [[ -n $name && -d $RELEASES_DIR/$name ]] || die "no $APP_DIR: the first boot did not get the app (see reprovision)"
  point_app_dir "$name"
  state_set '^adopting ' "good $name"
  log "the first boot's checkout is now release $name"
}

# ops_release REF: REF (a branch, tag or commit) cloned with the token as step 8 clones, built in a
# new release while the current one serves, then switch_release. The first release takes over the
# first boot's checkout as release 0001, as it is. Then prune_releases.
ops_release() {
  local sha name
  [[ -L $APP_DIR ]] || adopt_first_checkout
  FROM=$(current_release)
  check_free_space
  BUILD=$RELEASES_DIR/.new
  retry "git clone" source_git clone --quiet --no-checkout "$REPO_URL" "$BUILD" || die "no clone of $REPO_URL; $FROM still serves"
  sha=$(as_login git -C "$BUILD" rev-parse --verify --quiet "origin/$1^{commit}" || as_login git -C "$BUILD" rev-parse --verify --quiet "$1^{commit}") ||
    die "unknown ref $1; $FROM still serves"
  log "building $1 ($sha)"
  as_login git -C "$BUILD" checkout --quiet --detach "$sha"
  # As step 14 and the unit install, so that the unit's own install finds nothing to do.
  (cd "$BUILD" && as_node NODE_ENV=production yarn install --ignore-engines) || die "$1 does not build; $FROM still serves"
  name=$(new_release "$sha")
  as_login mv -T "$BUILD" "$RELEASES_DIR/$name"
  BUILD=$RELEASES_DIR/$name
  switch_release "$name"
  BUILD=''
  prune_releases
}

# prune_releases: the newest KEEP_RELEASES releases stay, and the current one, the one before it (FROM)
# and the last known good one; each other goes by a rename first (a kill leaves no half release).
prune_releases() {
  local keep old
  keep=" $(current_release) $FROM $(last_good) "
  for old in $(release_names | head -n -"$KEEP_RELEASES"); do
    [[ $keep != *" $old "* ]] || continue
    as_login mv -T "$RELEASES_DIR/$old" "$RELEASES_DIR/.prune-$old"
    state_set "^(good|failed) $old\$" ''
    as_login rm -rf "${RELEASES_DIR:?}/.prune-$old"
  done
}

# ops_rollback [RELEASE]: switch_release to RELEASE, by default the last known good release (last_good).
ops_rollback() {
  FROM=$(current_release)
  TO=${1:-$(last_good)}
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

# os_release: the operating system's release (Amazon Linux 2023: with its date).
os_release() {
  sed -n 's/^PRETTY_NAME=//p' /etc/os-release
}

# ops_status: the release (and whether it is verified), the unit, the app's answer, the lock (read, never
# taken) and the last actions; exit 1 when the app does not answer below 500.
ops_status() {
  local ok=0 holder new previous who what
  answers || ok=1
  echo "release: $(readlink "$APP_DIR" || echo "$APP_DIR")"
  if read -r new previous who what < <(state_get unverified); then
    echo "unverified: $new ($what by $who, cut off); the next action checks it, a boot starts $previous"
  fi
  systemctl show -p ActiveState -p SubState -p MainPID "$APP_NAME.service"
  echo "answer: HTTP $CODE on $HEALTH_PATH"
  if holder=$(readlink "$OPS_LOCK" 2>/dev/null); then
    holder_alive "$holder" || holder="stale: $holder: gone; the next action takes it over (or: sudo rm $OPS_LOCK)"
    echo "lock: $holder"
  fi
  tail -n 5 "$OPS_LOG" 2>/dev/null || true
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
# action's lock (OPS_LOCK_HOLDER): the repair of a failed first boot; on a healthy host it changes
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
# (rotate_secrets, userdata/parameter-store.sh, which only that mode's user data holds).
ops_rotate_secrets() {
  declare -F rotate_secrets >/dev/null || die "rotate-secrets needs \"secrets\": \"parameter-store\" (docs/secrets.md)"
  rotate_secrets
}
