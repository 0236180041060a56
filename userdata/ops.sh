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
# shellcheck disable=SC2154 # the variables come from the rendered header

# ops_main ACTION ARGS...: the dispatcher.
ops_main() {
  ((EUID == 0)) || die "run it as root (sudo)"
  case ${1:-} in
    release | rollback | patch | reprovision | rotate-secrets) ops_change "$@" ;;
    releases | status) "ops_$1" "${@:2}" ;;
    *) die "usage: $OPS_COMMAND release REF|rollback [RELEASE]|releases|status|patch [VERSION]|reprovision|rotate-secrets" ;;
  esac
}

# check_ref ARGS...: one ref that passes the one rule (settings/git-ref.ts: REF_SHAPE, and not REF_FORBIDDEN).
check_ref() {
  [[ $# == 1 && $1 =~ $REF_SHAPE && ! $1 =~ $REF_FORBIDDEN ]] ||
    die "release takes one branch, tag or commit: letters, digits and . _ / -, starting with a letter or digit, that git check-ref-format accepts; got '$*'"
}

# ops_change ACTION ARGS...: ACTION under the lock, with an audit line when it ends (ops_audit).
ops_change() {
  AUDIT="$*" FROM='' TO='' FAILURE='' REBOOT='' CURRENT_STEP=$1 MAIN_SUBSHELL=$BASH_SUBSHELL
  trap 'ops_audit $?' EXIT
  trap on_error ERR
  if [[ $1 == release ]]; then
    # The ref first: before any secret, lock or clone.
    check_ref "${@:2}"
    load_secrets
    # All output through redact (to stderr, as log lines go) from here on; started before the lock is
    # taken, so that it does not hold it.
    exec > >(redact >&2) 2>&1
  fi
  ops_lock "$*"
  variant TOPOLOGY ops_action "$@"
}

# ops_action ACTION ARGS...: runs ops_ACTION (- as _) with ARGS; the single host takes every action.
ops_action_single_host() {
  "ops_${1//-/_}" "${@:2}"
}

# ops_audit STATUS: the action's line in OPS_LOG: when, who (through sudo), what, from -> to, result.
ops_audit() {
  local result=ok
  (($1 == 0)) || result="${FAILURE:-failed} (exit $1)"
  printf '%s %s %s: %s -> %s: %s\n' "$(date -u +%FT%TZ)" "${SUDO_USER:-root}" "$AUDIT" "${FROM:--}" "${TO:--}" "$result" >>"$OPS_LOG"
  [[ -z $REBOOT ]] || systemctl reboot
}

# ops_lock WHAT: the one lock of the changing actions and of the provisioning script; a run of the
# script that one of them starts (reprovision) inherits its descriptor, and with it the lock.
ops_lock() {
  [[ /proc/$BASHPID/fd/9 -ef $OPS_LOCK ]] || exec 9<>"$OPS_LOCK"
  if ! flock -n 9; then
    FAILURE="busy: $(<"$OPS_LOCK")"
    log "ERROR: $FAILURE"
    exit 75
  fi
  printf '%s by %s (pid %s, since %s)\n' "$1" "${SUDO_USER:-root}" $$ "$(date -u +%FT%TZ)" >"$OPS_LOCK"
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

# point_app_dir RELEASE: <app_dir> links to RELEASE, replaced in one rename.
point_app_dir() {
  as_login ln -sfn "$RELEASES_DIR/$1" "$APP_DIR.ops-link"
  as_login mv -fT "$APP_DIR.ops-link" "$APP_DIR"
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
  systemctl restart "$unit"
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

# switch_release RELEASE PREVIOUS: <app_dir> to RELEASE, with the current .env, and the unit restarted:
# kept when the app answers, else PREVIOUS serves again (status 3; exit 1 when it does not answer either).
switch_release() {
  if [[ -f $APP_DIR/.env ]]; then as_login cp -p "$APP_DIR/.env" "$RELEASES_DIR/$1/.env"; fi
  point_app_dir "$1"
  if restart_app; then return 0; fi
  log "back to $2"
  point_app_dir "$2"
  restart_app || die "$1 did not answer, nor does $2 after going back to it"
  FAILURE="$1 did not answer; $2 serves again" TO=$2
  log "ERROR: $FAILURE"
  return 3
}

# ops_release REF: REF (a branch, tag or commit) cloned with the token as step 8 clones, built in a
# new release while the current one serves, then switch_release. The first release takes over the
# first boot's checkout as release 0001, as it is. The newest KEEP_RELEASES releases stay, and the current one.
ops_release() {
  check_ref "$@"
  local new sha name old
  [[ -e $APP_DIR ]] || die "no $APP_DIR: the first boot did not get the app (see reprovision)"
  if [[ ! -L $APP_DIR ]]; then
    as_login mkdir -p "$RELEASES_DIR"
    name=$(new_release "$(as_login git -C "$APP_DIR" rev-parse HEAD)")
    as_login mv -T "$APP_DIR" "$RELEASES_DIR/$name"
    point_app_dir "$name"
    log "the first boot's checkout is now release $name"
  fi
  FROM=$(current_release)
  new=$RELEASES_DIR/.new
  as_login rm -rf "$new"
  retry "git clone" git_token clone --quiet --no-checkout "$REPO_URL" "$new"
  sha=$(as_login git -C "$new" rev-parse --verify --quiet "origin/$1^{commit}" || as_login git -C "$new" rev-parse --verify --quiet "$1^{commit}") ||
    die "unknown ref $1; $FROM still serves"
  log "building $1 ($sha)"
  as_login git -C "$new" checkout --quiet --detach "$sha"
  # As step 14 and the unit install, so that the unit's own install finds nothing to do.
  (cd "$new" && as_node NODE_ENV=production yarn install --ignore-engines) || die "$1 does not build; $FROM still serves"
  name=$(new_release "$sha")
  TO=$name
  as_login mv -T "$new" "$RELEASES_DIR/$name"
  # A release that never served is not kept.
  switch_release "$name" "$FROM" || { as_login rm -rf "${RELEASES_DIR:?}/$name"; exit 3; }
  for old in $(release_names | head -n -"$KEEP_RELEASES"); do
    if [[ $old != "$name" ]]; then as_login rm -rf "${RELEASES_DIR:?}/$old"; fi
  done
}

# ops_rollback [RELEASE]: switch_release to RELEASE, by default the newest release before the current one.
ops_rollback() {
  FROM=$(current_release)
  TO=${1:-$(release_names | awk -v c="$FROM" '$0 < c' | tail -n 1)}
  [[ $# -le 1 && -n $FROM && $TO =~ ^[0-9]{4}-[0-9a-f]{7}$ && -d $RELEASES_DIR/$TO ]] ||
    die "no release ${1:-before ${FROM:-the first one}}"
  if [[ $TO != "$FROM" ]]; then switch_release "$TO" "$FROM" || exit 3; fi
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

# ops_status: the release, the unit, the app's answer, the lock and the last actions;
# exit 1 when the app does not answer below 500.
ops_status() {
  local ok=0
  answers || ok=1
  echo "release: $(readlink "$APP_DIR" || echo "$APP_DIR")"
  systemctl show -p ActiveState -p SubState -p MainPID "$APP_NAME.service"
  echo "answer: HTTP $CODE on $HEALTH_PATH"
  flock -n "$OPS_LOCK" true || echo "lock: $(<"$OPS_LOCK")"
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
  else
    answers || restart_app || die "the app does not answer after the updates"
  fi
}

# ops_reprovision: the user data (the provisioning script) run again as cloud-init ran it: the repair
# of a failed first boot; on a healthy host it changes nothing the first run settled.
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
  die "rotate-secrets needs \"secrets\": \"parameter-store\"; this host's secrets are in its user data, which only a new host changes"
}
