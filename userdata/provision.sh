#!/bin/bash
# First-boot provisioning of the CRM host (docs/original-stack.md §3): one function per step, defined and
# called in the original stack's order. Runs as root under cloud-init on Amazon Linux 2023; safe to run again.
#
# This file is not run on its own: userdata/script.ts puts a header in front of it that sets the
# settings (APP_NAME, APP_DIR, REPO_URL, ...), the constants of the original stack (PACKAGES, NODE_VERSION,
# SWAP_SIZE, SERVICE_UNIT, ...) and the secrets in base64 (*_B64). See renderProvisioningScript.
#
# The topologies (and the two places of the secrets) differ in a few functions only, and in one way:
# such a function NAME is `variant AXIS NAME`, and its definitions are NAME_<value>, one for each value
# of the header's AXIS: TOPOLOGY is single_host (local-database.sh) or scale_out (remote-database.sh),
# of which the user data carries the one it needs; SECRETS is user_data (this file) or parameter_store
# (parameter-store.sh).
# Steps that are the same but for a value (the app user's host and grants, the .env's database
# address) read it from the header. No function is defined twice.
# shellcheck disable=SC2154 # the variables above come from the rendered header
set -Eeuo pipefail
shopt -s inherit_errexit

export GIT_TERMINAL_PROMPT=0 PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
# shellcheck disable=SC2034 # read by the functions a user data may leave out (treeShake)
DB_ROOT_PASSWORD='' APP_DB_PASSWORD='' SOURCE_HOST_TOKEN='' PUBLIC_DNS='' CURRENT_STEP=setup MAIN_SUBSHELL=0
TEMP_FILES=()

log() { printf '%s %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${LOG_TAG:-provision}" "$*" >&2; }
die() {
  FAILURE=$*
  log "ERROR: $*"
  if ((BASH_SUBSHELL == MAIN_SUBSHELL)); then log "FAILED: $CURRENT_STEP"; fi
  exit 1
}

on_error() {
  local rc=$?
  # Log once, in the main shell, not again in every command substitution the error passes through.
  if ((BASH_SUBSHELL == MAIN_SUBSHELL)); then
    log "FAILED: $CURRENT_STEP (exit status $rc, line ${BASH_LINENO[0]})"
  fi
  exit "$rc"
}

# variant AXIS NAME ARGS...: runs NAME_<the header's AXIS>, this host's definition of NAME (see above).
variant() {
  local axis=$1
  "$2_${!axis}" "${@:3}"
}

# run_step STEP: runs STEP, logged. Step 9 runs one host at a time where hosts share the database
# (scale-out: two hosts booting together would both find no import mark; there, step 6's work is
# db-setup's, which takes the same lock).
run_step() {
  CURRENT_STEP=$1
  log "START $1"
  case $1 in
    step_09_import_database) variant TOPOLOGY one_host_at_a_time "$1" ;;
    *) "$1" ;;
  esac
  log "DONE $1"
}

# retry WHAT COMMAND...: for network steps; WHAT is logged instead of COMMAND, which may hold a secret.
retry() {
  local what=$1 n=1
  shift
  until "$@"; do
    if ((n >= ATTEMPTS)); then
      log "$what failed $n times"
      return 1
    fi
    log "$what failed (attempt $n of $ATTEMPTS); retrying in $PAUSE s"
    sleep "$PAUSE"
    n=$((n + 1))
  done
}

hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }

urlencode() {
  local LC_ALL=C s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [A-Za-z0-9._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

# decode_secret NAME LABEL: sets NAME from NAME_B64, refusing bad base64, empty values and control characters.
decode_secret() {
  local b64_name="$1_B64" bad
  local b64=${!b64_name}
  printf '%s' "$b64" | base64 -d >/dev/null 2>&1 || die "the secret $2 ($b64_name) is not valid base64"
  bad=$(printf '%s' "$b64" | base64 -d | LC_ALL=C tr -d '\040-\176\200-\377' | wc -c)
  ((bad == 0)) || die "the secret $2 ($b64_name) contains control characters (such as a line break); refusing it"
  printf -v "$1" '%s' "$(printf '%s' "$b64" | base64 -d)"
  [[ -n ${!1} ]] || die "the secret $2 ($b64_name) is empty"
}

# load_secrets: sets DB_ROOT_PASSWORD, APP_DB_PASSWORD and SOURCE_HOST_TOKEN (and their *_B64 forms,
# which redact hides), and who root_sql logs in as (DB_ADMIN_USER, DB_ADMIN_PASSWORD). The one place
# the script and the ops command read the secrets.
load_secrets() {
  variant SECRETS load_secrets
  variant TOPOLOGY load_database_admin
}

# The user data's secrets: the header's *_B64, else, in the ops command (which holds no secret), those
# the user data's header assigns (only lines of exactly that shape are run).
load_secrets_user_data() {
  [[ -v SOURCE_HOST_TOKEN_B64 ]] || eval "$(user_data | grep -E "^readonly [A-Z_]+_B64='[A-Za-z0-9+/=]+'$")"
  decode_secret DB_ROOT_PASSWORD "database root password"
  decode_secret APP_DB_PASSWORD "application database password"
  decode_secret SOURCE_HOST_TOKEN "source host token"
}

# Filters all output: no form of a secret (raw, URL-encoded, hex, base64) reaches a log.
redact() {
  local forms=() v line
  for v in "$DB_ROOT_PASSWORD_B64" "$APP_DB_PASSWORD_B64" "$SOURCE_HOST_TOKEN_B64"; do
    forms+=("$v")
    v=$(printf '%s' "$v" | base64 -d 2>/dev/null) || v=''
    if [[ -n $v ]]; then forms+=("$v" "$(urlencode "$v")" "$(hex "$v")"); fi
  done
  # Longest first: had a secret that begins another one gone first, the other's tail would show.
  mapfile -t forms < <(for v in "${forms[@]}"; do printf '%s %s\n' "${#v}" "$v"; done | sort -rn | cut -d' ' -f2-)
  while IFS= read -r line || [[ -n $line ]]; do
    for v in "${forms[@]}"; do line=${line//"$v"/[REDACTED]}; done
    printf '%s\n' "$line"
  done
}

# root_sql SQL: SQL as the database's administrator (load_secrets); SQL goes to the client on stdin and
# the password in its environment, so nothing derived from a secret is on a command line.
root_sql() { printf '%s\n' "$1" | MYSQL_PWD=$DB_ADMIN_PASSWORD mariadb --user="$DB_ADMIN_USER" --batch --skip-column-names; }

# password_hash PASSWORD: the server hashes hex data, so a password is never SQL source; the
# hash (only hex digits) is what CREATE USER and SET PASSWORD are given.
password_hash() {
  local hash
  hash=$(root_sql "SELECT PASSWORD(CONVERT(X'$(hex "$1")' USING utf8mb4));")
  [[ $hash =~ ^\*[0-9A-F]{40}$ ]] || die "the database server returned no password hash"
  printf '%s' "$hash"
}

# install_file PATH MODE: writes stdin to PATH through a private temporary file; an unchanged file is left alone.
install_file() {
  local tmp
  mkdir -p "$(dirname "$1")"
  rm -f -- "$1".provision-??????  # a killed run's
  tmp=$(mktemp "$1.provision-XXXXXX")
  TEMP_FILES+=("$tmp")
  cat >"$tmp"
  chmod "$2" "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

# load_units UNIT...: systemd holds UNITs' files as they are now. It reads a unit it has not loaded from its file
# when first asked for it; a reload (every unit and generator again: seconds of CPU on a small instance) only when it
# holds an older version of one of them (a file or drop-in written since).
load_units() {
  local unit
  for unit; do
    if [[ $(systemctl show -p NeedDaemonReload --value "$unit") == yes ]]; then
      systemctl daemon-reload
      return
    fi
  done
}

# enable_unit UNIT: UNIT started at boot from now on; without the reload `systemctl enable` makes each time, even
# for an enabled unit: the boot reads the link.
enable_unit() {
  systemctl is-enabled --quiet "$1" || systemctl enable --no-reload "$1"
}

as_login() { runuser -u "$LOGIN_USER" -- env -u NVM_DIR -u XDG_CONFIG_HOME HOME="$LOGIN_HOME" "$@"; }
as_node() { as_login PATH="$NODE_BIN:$PATH" "$@"; }

# git_token ARGS...: git as root, never as the login user (who runs the app: its processes must never
# hold the token), given the token by a credential helper that reads it from the environment: never in
# an address, a file or any command line. The empty value drops other helpers. Bounded: it fails after
# GIT_SECONDS in all, or GIT_STALL_SECONDS at less than 1 KiB/s.
git_token() {
  # shellcheck disable=SC2016
  CRM_GIT_USER=$TOKEN_USERNAME CRM_GIT_TOKEN=$SOURCE_HOST_TOKEN timeout -k 5 "$GIT_SECONDS" git -c http.lowSpeedLimit=1024 \
    -c http.lowSpeedTime="$GIT_STALL_SECONDS" -c credential.helper= -c \
    'credential.helper=!f() { if [ "$1" = get ]; then printf "username=%s\npassword=%s\n" "$CRM_GIT_USER" "$CRM_GIT_TOKEN"; fi; }; f' "$@"
}

# dotenv_value VALUE: VALUE written so that dotenv reads it back exactly: as it is when plain, else in
# the first quotes it lacks, else bare when dotenv keeps it whole. constructs/variable-rules.ts
# (dotenvCondition) refuses at plan what none of these forms carries.
dotenv_value() {
  local LC_ALL=C v=$1 q sp=$'( |\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xaf]|\xe2\x81\x9f|\xe3\x80\x80)'
  if [[ $v =~ ^[A-Za-z0-9_./:@%+=,-]+$ ]]; then printf '%s' "$v"; return; fi
  for q in "'" '`' '"'; do
    if [[ $v != *"$q"* && $v != *\\ && ! ($q == '"' && $v =~ \\[nr]) ]]; then printf '%s' "$q$v$q"; return; fi
  done
  if [[ $v != *#* && ! $v =~ ^$sp && ! $v =~ $sp$ && ( $v =~ ^[^\'\"\`] || $v =~ ^\'(|.*[^\\])\'.*[^\']$ ||
    $v =~ ^\`(|.*[^\\])\`.*[^\`]$ || ($v =~ ^\"(|.*[^\\])\".*[^\"]$ && ! $v =~ \\[nr]) ) ]]; then
    printf '%s' "$v"
    return
  fi
  die "a value cannot be written to .env so that dotenv reads it back unchanged"
}

# clone_source DEST ARGS...: REPO_URL cloned (git clone ARGS, tried ATTEMPTS times) by root with the
# token into a private directory (mode 700, under TMPDIR or /var/tmp), then handed to the login user
# and moved to DEST (the token stays in no file: the credential helper keeps none). A killed run's
# directory goes first (under the lock, no other clone runs).
clone_source() {
  local stage tmp=${TMPDIR:-/var/tmp}
  rm -rf -- "$tmp/$APP_NAME-clone."??????
  stage=$(mktemp -d -p "$tmp" "$APP_NAME-clone.XXXXXX")
  TEMP_FILES+=("$stage")
  retry "git clone" clone_into "$stage/src" "${@:2}"
  chown -R "$LOGIN_USER:" "$stage/src"
  mv -T "$stage/src" "$1"
}

# clone_into DIR ARGS...: one try of clone_source's clone, into DIR, emptied first.
clone_into() {
  rm -rf "$1"
  git_token clone --quiet "${@:2}" "$REPO_URL" "$1"
}

step_01_update_packages() {
  retry "dnf upgrade" dnf -y upgrade
}

step_02_install_packages() {
  retry "dnf groupinstall" dnf -y groupinstall "Development Tools"
  retry "dnf install" dnf -y install "${PACKAGES[@]}"
  # nftables is installed now; the rules are in place before any command runs as the login user.
  configure_firewall
}

# metadata_address: the nftables family and address of the metadata service (an IP literal, as the
# settings demand): "ip 169.254.169.254", or "ip6 fd00:ec2::254" for http://[fd00:ec2::254].
metadata_address() {
  local host=${METADATA_ENDPOINT#http://}
  if [[ $host == \[* ]]; then
    host=${host#[}
    printf 'ip6 %s' "${host%%]*}"
  else
    printf 'ip %s' "${host%%:*}"
  fi
}

# The script's own nftables table (nft_block):
# - only root may reach the metadata service, which serves this user data with its secrets to any
#   local process that asks (the app, or a package's install script run by yarn), and the user
#   ec2-instance-connect where the image has it: EC2 Instance Connect's AuthorizedKeysCommand runs as
#   that user and reads the keys pushed for a login from there (by uid: nft needs a user that exists);
# - tcp/80 goes to the app's port, since the app runs as the login user, who cannot bind 80
#   (unless the settings say the app binds 80 itself: then its unit has CAP_NET_BIND_SERVICE);
#   from the host itself too, except to the metadata service where that address is local.
configure_firewall() {
  local rules family metadata uids=0 uid
  read -r family metadata <<<"$(metadata_address)"
  if uid=$(id -u ec2-instance-connect 2>/dev/null); then uids="{ 0, $uid }"; fi
  rules="table inet $APP_NAME
delete table inet $APP_NAME
table inet $APP_NAME {
  chain metadata_root_only {
    type filter hook output priority 0; policy accept;
    $family daddr $metadata meta skuid != $uids counter reject comment \"metadata service: root and ec2-instance-connect only\"
  }"
  if [[ $REDIRECT_HTTP_PORT == true ]]; then
    rules+="
  chain http_to_app {
    type nat hook prerouting priority -100; policy accept;
    tcp dport $HTTP_PORT counter redirect to :$APP_PORT
  }
  chain http_to_app_local {
    type nat hook output priority -100; policy accept;
    $family daddr $metadata return
    fib daddr type local tcp dport $HTTP_PORT counter redirect to :$APP_PORT
  }"
  fi
  rules+=$'\n}'
  nft_block "$APP_NAME (provisioning script)" "$rules"
}

# nft_block NAME RULES: RULES (a table's whole definition) applied at once, and kept as the block NAME of the file
# that the distribution's nftables service loads at boot (a rerun replaces the block, keeps the rest); the ops tool
# runs this before every changing action (front_firewall).
nft_block() {
  local mode=644 kept='' begin="# BEGIN $1" end="# END $1"
  nft -f /dev/stdin <<<"$2"
  if [[ -f $NFTABLES_CONFIG ]]; then
    mode=$(stat -c %a "$NFTABLES_CONFIG")
    kept=$(awk -v b="$begin" -v e="$end" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' "$NFTABLES_CONFIG")
  fi
  printf '%s\n%s\n%s\n%s\n' "$kept" "$begin" "$2" "$end" | sed '1{/^$/d}' | install_file "$NFTABLES_CONFIG" "$mode"
  enable_unit "$NFTABLES_SERVICE"
}

step_03_start_database() { variant TOPOLOGY step_03_start_database; }

step_04_set_root_password() { variant TOPOLOGY step_04_set_root_password; }

step_05_create_database() {
  root_sql "CREATE DATABASE IF NOT EXISTS \`$DATABASE_NAME\`;"
}

step_06_create_app_user() { variant TOPOLOGY step_06_create_app_user; }

# create_app_account: the user APP_DB_USER@APP_DB_USER_HOST (the header's: localhost, or '%' on the scale-out topology,
# whose hosts come and go behind the database's security group), created only if absent. An existing
# one whose password is not app_db_password (rotated, or none) gets it: step 11 writes that one to .env.
# It gets APP_DB_GRANTS (the header's; userdata/constants.ts says why) on the one database: in GRANT,
# _ in a database name is a wildcard (crm_app would also match crmXapp, mysq_ the mysql schema), escaped.
# The account this host's app uses (APP_DB_LOGIN, which steps 9 and 11 take; APP_DB_USER without step 6) is
# APP_DB_USER, or on the scale-out topology one of two (app_account), which db-setup makes there.
create_app_account() {
  local hash found account
  hash=$(password_hash "$APP_DB_PASSWORD")
  variant TOPOLOGY app_account "$hash"
  account="'$APP_DB_LOGIN'@'$APP_DB_USER_HOST'"
  # = before the hash: a user without a password is found too.
  found=$(root_sql "SELECT CONCAT('=', authentication_string) FROM mysql.user WHERE User = '$APP_DB_LOGIN' AND Host = '$APP_DB_USER_HOST';")
  if [[ -z $found ]]; then
    root_sql "CREATE USER $account IDENTIFIED BY PASSWORD '$hash';"
    log "created the database user $APP_DB_LOGIN@$APP_DB_USER_HOST"
  elif [[ $found != "=$hash" ]]; then
    root_sql "ALTER USER $account IDENTIFIED BY PASSWORD '$hash';"
    log "the password of $APP_DB_LOGIN@$APP_DB_USER_HOST was not app_db_password: changed it to app_db_password"
  else
    log "the database user $APP_DB_LOGIN@$APP_DB_USER_HOST exists"
  fi
  root_sql "GRANT $APP_DB_GRANTS ON \`${DATABASE_NAME//_/\\_}\`.* TO $account;
FLUSH PRIVILEGES;"
}

step_07_configure_git() {
  as_login git config --global user.name "$GIT_USER"
  as_login git config --global user.email "$GIT_EMAIL"
}

step_08_fetch_repository() { variant TOPOLOGY step_08_fetch_repository; }

# All or nothing across runs: the database's comment says "importing" until the import is complete,
# so a run that finds it half imported (killed, or failed) empties the database and imports again.
step_09_import_database() {
  local dump="$APP_DIR/export.sql" state tables db="\`$DATABASE_NAME\`" mark="crm-provisioning: export.sql"
  if [[ ! -f $dump ]]; then log "no $dump, nothing to import"; return 0; fi
  state=$(root_sql "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$DATABASE_NAME';")
  if [[ $state == "$mark imported" ]]; then log "$dump was imported before; not importing it again"; return 0; fi
  tables=$(root_sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$DATABASE_NAME';")
  if [[ $state == "$mark importing" ]]; then
    log "an import of $dump stopped half way ($tables tables); importing it again into an empty $DATABASE_NAME"
    root_sql "DROP DATABASE $db; CREATE DATABASE $db;"
  elif [[ $tables != 0 ]]; then
    log "$DATABASE_NAME already holds $tables tables; not importing $dump"
    return 0
  fi
  root_sql "ALTER DATABASE $db COMMENT '$mark importing';"
  MYSQL_PWD=$APP_DB_PASSWORD mariadb --user="${APP_DB_LOGIN:-$APP_DB_USER}" "$DATABASE_NAME" <"$dump"
  root_sql "ALTER DATABASE $db COMMENT '$mark imported';"
}

step_10_read_public_hostname() {
  read_public_hostname
}

# metadata PATH: GET <endpoint>/latest/PATH from the metadata service (IMDSv2: a session token first).
metadata() {
  local token
  token=$(retry "metadata token" curl -fsS --max-time 10 -X PUT -H "X-aws-ec2-metadata-token-ttl-seconds: $METADATA_TOKEN_TTL_SECONDS" "$METADATA_ENDPOINT/latest/api/token")
  retry "metadata $1" curl -fsS --max-time 30 -H "X-aws-ec2-metadata-token: $token" "$METADATA_ENDPOINT/latest/$1"
}

# read_public_hostname: sets PUBLIC_DNS, the app's public name. Also run at each boot by the refresh script.
read_public_hostname() { variant TOPOLOGY read_public_hostname; }

# FRONTENDURI and BACKENDURI are the header's templates with the public hostname in place of @PUBLIC_DNS@
# (the scale-out topology's name the load balancer as they are). DATABASE_ADDRESS_ENV: the header's
# DB_HOST and DB_PORT of a database elsewhere (docs/scale-out.md), which the app must read; none on the
# single host, whose app reaches its own server by default.
step_11_write_env_file() {
  set_env_values DB_USER "${APP_DB_LOGIN:-$APP_DB_USER}" DB_PASSWORD "$APP_DB_PASSWORD" DB_NAME "$DATABASE_NAME" "${DATABASE_ADDRESS_ENV[@]}" \
    FRONTENDURI "${FRONTEND_URI//@PUBLIC_DNS@/$PUBLIC_DNS}" BACKENDURI "${BACKEND_URI//@PUBLIC_DNS@/$PUBLIC_DNS}"
}

# set_env_values KEY VALUE...: in $APP_DIR/.env, each KEY's line is replaced where it is, or appended
# (in argument order) where it is missing; every other line is kept. Also run at each boot by the
# refresh script. Written through a private temporary file, never through sed.
set_env_values() {
  local file="$APP_DIR/.env" tmp line key order=()
  local -A want=() seen=()
  while (($# >= 2)); do
    want[$1]=$(dotenv_value "$2")
    order+=("$1")
    shift 2
  done
  # A killed run's temporary copy (it holds the password): not left for good.
  rm -f -- "$file".provision-??????
  tmp=$(mktemp "$file.provision-XXXXXX")
  TEMP_FILES+=("$tmp")
  {
    if [[ -f $file ]]; then
      while IFS= read -r line || [[ -n $line ]]; do
        key=''
        [[ $line =~ ^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*= ]] && key=${BASH_REMATCH[2]}
        if [[ -n $key && -v want[$key] ]]; then
          printf '%s=%s\n' "$key" "${want[$key]}"
          seen[$key]=1
        else
          printf '%s\n' "$line"
        fi
      done <"$file"
    fi
    for key in "${order[@]}"; do
      [[ -v seen[$key] ]] || printf '%s=%s\n' "$key" "${want[$key]}"
    done
  } >"$tmp"
  chmod "$ENV_FILE_MODE" "$tmp"
  chown "$LOGIN_USER:" "$tmp"
  mv -f "$tmp" "$file"
}

step_12_install_node() {
  local installer
  installer=$(mktemp)
  TEMP_FILES+=("$installer")
  retry "nvm download" curl -fsSL --max-time 120 -o "$installer" "$NVM_INSTALL_URL"
  chmod 644 "$installer"
  retry "nvm installer" as_login bash "$installer"
  rm -f "$installer"
  # shellcheck disable=SC2016
  retry "Node.js install" as_login bash -c '. "$HOME/.nvm/nvm.sh" && nvm install "$1" && nvm alias default "$1" && nvm install "$2" && nvm use "$2"' \
    install-node "$NODE_MAJOR" "$NODE_VERSION"
}

# Formats only a file it has just created, under another name until it is a swap file: an existing
# file that is not swap (a setting pointing at data) stops the run instead of being formatted.
step_13_enable_swap() {
  local partial="$SWAP_FILE.partial"
  cd "$APP_DIR"
  if swapon --show=NAME --noheadings | grep -xF "$SWAP_FILE" >/dev/null; then
    log "swap $SWAP_FILE is already on"
    add_swap_to_fstab
    return 0
  fi
  if [[ ! -e $SWAP_FILE ]]; then
    rm -f "$partial"
    (umask 077 && fallocate -l "$SWAP_SIZE" "$partial")
    chmod "$SWAP_FILE_MODE" "$partial"
    mkswap "$partial"
    mv -T "$partial" "$SWAP_FILE"
  fi
  [[ -f $SWAP_FILE && $(blkid -p -o value -s TYPE "$SWAP_FILE") == swap ]] ||
    die "$SWAP_FILE exists and is not a swap file; not formatting it"
  chmod "$SWAP_FILE_MODE" "$SWAP_FILE"
  swapon "$SWAP_FILE"
  add_swap_to_fstab
}

# The swap file comes back after a reboot only through the file system table: one line, added once.
add_swap_to_fstab() {
  if [[ -f $FSTAB ]] && awk -v f="$SWAP_FILE" '$1 == f { found = 1 } END { exit !found }' "$FSTAB"; then return 0; fi
  printf '%s none swap defaults 0 0\n' "$SWAP_FILE" >>"$FSTAB"
}

step_14_install_dependencies() {
  if [[ ! -x $NODE_BIN/yarn ]]; then retry "yarn install -g" as_node npm install -g yarn; fi
  cd "$APP_DIR"
  # As the unit runs it (Environment=NODE_ENV=production): otherwise the unit's first start would
  # prune the development dependencies this install added.
  retry "yarn install" as_node NODE_ENV=production yarn install --ignore-engines
}

step_15_install_service() {
  install_command "$REFRESH_SCRIPT" 755 refresh_public_uris
  printf '%s' "$REFRESH_UNIT" | install_file "$UNIT_DIRECTORY/$REFRESH_UNIT_NAME" 644
  printf '%s' "$SERVICE_UNIT" | install_file "$UNIT_DIRECTORY/$APP_NAME.service" 644
  systemctl daemon-reload
  enable_unit "$APP_NAME.service"
  systemctl start "$APP_NAME.service"
}

# What the refresh unit runs at each boot, before the app (REFRESH_SCRIPT): steps 10 and 11, limited
# to FRONTENDURI and BACKENDURI.
refresh_public_uris() {
  trap 'rm -rf -- "${TEMP_FILES[@]}"' EXIT
  # A release switched to and never verified (its ops action was cut off) does not start (userdata/ops.sh): the
  # installed ops tool settles it. A host with no tool has had no action, so no release to settle.
  if [[ -x $OPS_COMMAND ]]; then "$OPS_COMMAND" settle-boot; fi
  read_public_hostname
  set_env_values FRONTENDURI "${FRONTEND_URI//@PUBLIC_DNS@/$PUBLIC_DNS}" BACKENDURI "${BACKEND_URI//@PUBLIC_DNS@/$PUBLIC_DNS}"
}

# load_modules: defines the functions of the modules (userdata/script.ts, hostModules), which ride in Parameter
# Store rather than in the user data (EC2's 16 KiB). The host keeps each under MODULE_DIR by the sha256 the header
# names: a run again (reprovision) reads its own copy, never what a later deploy put in the parameter.
load_modules() {
  local entry
  modules_kept || retry "reading the modules from Parameter Store" fetch_modules ||
    die "the modules are not in Parameter Store ($MODULE_PATH) as this user data names them (see above): deploy the stack, or replace a host older than its stack"
  for entry in "${MODULES[@]}"; do
    # shellcheck source=/dev/null # functions only, of the sha256 the header names
    source "$MODULE_DIR/${entry#*:}.sh"
  done
}

# module_kept SHA256: whether the host keeps the module of that sha256, intact.
module_kept() { [[ -f $MODULE_DIR/$1.sh ]] && sha256sum --status -c <<<"$1  $MODULE_DIR/$1.sh"; }

modules_kept() {
  local entry
  for entry in "${MODULES[@]}"; do module_kept "${entry#*:}" || return 1; done
}

# fetch_modules: reads the modules the host lacks, in one call, and keeps each whose sha256 the header names (written
# beside, then renamed: a kill or a full disk leaves the previous ones); fails naming one whose parameter is missing or
# holds another version (a deploy under way: retried; or a host older than its stack's modules).
fetch_modules() {
  local entry names=() name value sum out region
  for entry in "${MODULES[@]}"; do module_kept "${entry#*:}" || names+=("$MODULE_PATH/${entry%%:*}"); done
  install -d -m 700 "$MODULE_DIR"
  region=$(metadata meta-data/placement/region) || return 1
  out=$(aws ssm get-parameters --region "$region" --names "${names[@]}" --query 'Parameters[].[Name,Value]' --output text) || return 1
  while read -r name value; do
    [[ -n $name ]] || continue
    printf '%s' "$value" | base64 -d | gzip -dc | install_file "$MODULE_DIR/fetched" 600 || return 1
    sum=$(sha256sum <"$MODULE_DIR/fetched") && sum=${sum%% *}
    if [[ " ${MODULES[*]} " == *":$sum "* ]]; then mv -f "$MODULE_DIR/fetched" "$MODULE_DIR/$sum.sh"; else rm -f "$MODULE_DIR/fetched"; fi
  done <<<"$out"
  for entry in "${MODULES[@]}"; do
    module_kept "${entry#*:}" || { log "$MODULE_PATH/${entry%%:*}: missing, or not the version of sha256 ${entry#*:}"; return 1; }
  done
}

# settings_text: this script's settings as bash reads them back (its readonly variables, but the secrets
# *_B64 and bash's own): what install_command and the ops tool's configuration hold. No secret.
settings_text() {
  readonly -p | grep -Ev '_B64=|^declare -[a-z]+ (BASH|EUID|PPID|SHELLOPTS|UID)'
}

# install_command FILE MODE CODE: a script that runs CODE with this script's settings (settings_text) and
# functions: the refresh script, and the telemetry script. It holds no secret.
install_command() {
  {
    # shellcheck disable=SC2016 # expanded when the command runs
    printf '#!/bin/bash\nset -Eeuo pipefail\nshopt -s inherit_errexit\nexport GIT_TERMINAL_PROMPT=0 PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"\n'
    printf 'LOG_TAG=%s CURRENT_STEP=%s MAIN_SUBSHELL=0 TEMP_FILES=() PUBLIC_DNS=\n' "${1##*/}" "${1##*/}"
    settings_text
    declare -f
    printf '%s\n' "$3"
  } | install_file "$1" "$2"
}

main() {
  MAIN_SUBSHELL=$BASH_SUBSHELL
  trap on_error ERR
  # Temporary files go when the run ends, failed or not (a kill: see the steps that write them).
  trap 'rm -rf -- "${TEMP_FILES[@]}"; ops_unlock' EXIT
  ((EUID == 0)) || die "run this script as root"
  log "provisioning $APP_NAME: start"
  ops_lock provision
  # Metrics and logs to CloudWatch (userdata/telemetry.sh) from here on: a run that fails ships its log too.
  run_step install_telemetry
  run_step step_01_update_packages
  run_step step_02_install_packages
  run_step step_03_start_database
  run_step step_04_set_root_password
  run_step step_05_create_database
  run_step step_06_create_app_user
  run_step step_07_configure_git
  run_step step_08_fetch_repository
  run_step step_09_import_database
  run_step step_10_read_public_hostname
  run_step step_11_write_env_file
  run_step step_12_install_node
  run_step step_13_enable_swap
  run_step step_14_install_dependencies
  run_step step_15_install_service
  # HTTPS on the domain: the host's front from its first boot (userdata/front.sh is in the user data only then;
  # on any other single host, the ops tool installs the front before its first action: ensure_front).
  if [[ $HTTPS == true ]]; then run_step install_front; fi
  log "provisioning $APP_NAME: done"
}
