#!/bin/bash
# The scale-out topology's hosts (setting "topology": "scale-out", docs/scale-out.md): the database is
# Amazon RDS for MariaDB, shared by every host of the Auto Scaling group and reached over TCP at
# DB_HOST:DB_PORT as its master user, whose name and password RDS keeps in the Secrets Manager secret
# MASTER_SECRET_ARN; the app's public name is the load balancer's (or the domain's), which the header's
# FRONTEND_URI and BACKEND_URI hold.
#
# Function definitions only: the scale-out topology's definitions (NAME_scale_out) of the functions that
# provision.sh and ops.sh run through `variant TOPOLOGY NAME` (provision.sh says how): the database's
# administrator (load_database_admin), steps 3, 4 and 8, steps 6 and 9 one host at a time
# (one_host_at_a_time), the public name (read_public_hostname), and the ops command's actions
# (ops_action: those that would change one host where the whole group must change are refused).
# shellcheck disable=SC2154,SC2034 # the variables come from the rendered header; those set here, provision.sh's functions read

# The database's administrator is its master user (DB_ADMIN_USER, DB_ADMIN_PASSWORD), read from the JSON
# of the secret RDS manages ({"username": …, "password": …}) with the AWS CLI and parsed by python3 (both
# on every Amazon Linux 2023 image) from standard input: the password is never an argument nor in a file.
# It takes the root password's place (DB_ROOT_PASSWORD, DB_ROOT_PASSWORD_B64), which redact hides.
load_database_admin_scale_out() {
  local out fields=()
  out=$(retry "Secrets Manager" aws secretsmanager get-secret-value --region "$SECRETS_REGION" \
    --secret-id "$MASTER_SECRET_ARN" --query SecretString --output text) ||
    die "could not read the database's master secret $MASTER_SECRET_ARN (the AWS CLI's message is above)"
  # shellcheck disable=SC2016 # Python, not shell
  mapfile -d '' -t fields < <(printf '%s' "$out" | python3 -c 'import json, sys
secret = json.load(sys.stdin)
sys.stdout.write(secret["username"] + "\0" + secret["password"])' 2>/dev/null || true)
  [[ ${#fields[@]} == 2 && ${fields[0]} =~ ^[A-Za-z0-9_]{1,32}$ ]] ||
    die "the master secret $MASTER_SECRET_ARN holds no user name and password as RDS writes them"
  DB_ADMIN_USER=${fields[0]}
  printf -v DB_ROOT_PASSWORD_B64 '%s' "$(printf '%s' "${fields[1]}" | base64 -w0)"
  decode_secret DB_ROOT_PASSWORD "database master password ($MASTER_SECRET_ARN)"
  DB_ADMIN_PASSWORD=$DB_ROOT_PASSWORD
  log "the database's master user $DB_ADMIN_USER: credentials read from Secrets Manager ($MASTER_SECRET_ARN)"
}

# Step 3 without a server of its own: every mariadb call of the run (root_sql's, step 9's import as the
# app user among them) goes to DB_HOST:DB_PORT, which must answer within DATABASE_WAIT_SECONDS.
step_03_start_database_scale_out() {
  export MYSQL_HOST=$DB_HOST MYSQL_TCP_PORT=$DB_PORT
  local deadline=$((SECONDS + DATABASE_WAIT_SECONDS))
  # ping answers 0 once the server answers, whoever asks ("Access denied" included); mariadb-admin
  # reads no MYSQL_HOST.
  until mariadb-admin --host="$DB_HOST" --port="$DB_PORT" --connect-timeout=5 ping >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "the database $DB_HOST:$DB_PORT does not answer after $DATABASE_WAIT_SECONDS s (may this host's security group reach it?)"
    log "the database $DB_HOST:$DB_PORT does not answer yet; waiting"
    sleep 5
  done
  log "the database $DB_HOST:$DB_PORT answers"
}

# Step 4, the master user's credentials in place of the root password: unlike the local root password's
# step, a refusal stops the run, since steps 5 to 9 need them.
step_04_set_root_password_scale_out() {
  root_sql 'SELECT 1;' >/dev/null || die "the database refuses its master user $DB_ADMIN_USER with the password of $MASTER_SECRET_ARN"
  log "the master user $DB_ADMIN_USER logs in to $DB_HOST"
}

# app_account HASH (step 6): AWS's alternating users, so that a new app_db_password (reaching the group as new
# hosts) never locks out the hosts still serving: two accounts, APP_DB_USER and APP_DB_USER_b. A host takes the
# one whose password hash is HASH; when neither has it, the one missing, else the one whose password changed
# first (the other is the one the serving hosts use). Sets APP_DB_LOGIN.
app_account_scale_out() {
  local a=$APP_DB_USER b=${APP_DB_USER}_b
  APP_DB_LOGIN=$(root_sql "SELECT User, JSON_VALUE(Priv, '\$.authentication_string') = '$1' FROM mysql.global_priv
    WHERE Host = '$APP_DB_USER_HOST' AND User IN ('$a', '$b') ORDER BY JSON_VALUE(Priv, '\$.password_last_changed') + 0;" |
    awk -v a="$a" -v b="$b" '$2 == 1 { m = $1 } { s[$1] = 1; if (f == "") f = $1 } END { print m != "" ? m : !(a in s) ? a : !(b in s) ? b : f }')
}

# Step 8 on a host of the group: a new host clones the release the launch template names (RELEASE_REF;
# empty: the default branch) and never pulls: a new release reaches the group as a new launch template
# version, which an instance refresh rolls out host by host.
step_08_fetch_repository_scale_out() {
  local partial sha
  partial="$(dirname "$APP_DIR")/.$(basename "$APP_DIR").clone"
  if [[ -d $APP_DIR ]]; then
    log "$APP_DIR is there: keeping it (a new release reaches the group through an instance refresh)"
    return 0
  fi
  [[ -z $RELEASE_REF ]] || check_ref "$RELEASE_REF"
  rm -rf "$partial"
  clone_source "$partial" --no-checkout
  sha=$(as_login git -C "$partial" rev-parse --verify --quiet "origin/${RELEASE_REF:-HEAD}^{commit}" ||
    as_login git -C "$partial" rev-parse --verify --quiet "$RELEASE_REF^{commit}") ||
    die "the repository has no ref $RELEASE_REF (the variable release_ref)"
  as_login git -C "$partial" checkout --quiet --detach "$sha"
  mv -T "$partial" "$APP_DIR"
  log "release ${RELEASE_REF:-of the default branch}: $sha"
}

# The app's public name is the load balancer's or the domain's, which the header's URIs hold: step 10
# and the refresh at each boot keep them, whatever this host's own name is.
read_public_hostname_scale_out() {
  PUBLIC_DNS=${FRONTEND_URI#*://}
  log "public name: $PUBLIC_DNS (the load balancer's, or the domain's)"
}

# one_host_at_a_time STEP (run_step): runs STEP while a session of the master user holds the database's
# named lock (GET_LOCK, waiting at most DATABASE_LOCK_SECONDS for another host's). The lock lives as long
# as that session: a host that dies, or a run that fails, lets it go with its connection.
one_host_at_a_time_scale_out() {
  local lock="crm-provisioning:$DATABASE_NAME" got='' session input
  coproc LOCK_SESSION { MYSQL_PWD=$DB_ADMIN_PASSWORD exec mariadb --user="$DB_ADMIN_USER" --batch --skip-column-names --unbuffered; }
  # bash forgets the coprocess's variables once it has ended.
  session=$LOCK_SESSION_PID input=${LOCK_SESSION[1]}
  printf "SELECT GET_LOCK('%s', %d);\n" "$lock" "$DATABASE_LOCK_SECONDS" >&"$input"
  read -r -t $((DATABASE_LOCK_SECONDS + 60)) got <&"${LOCK_SESSION[0]}" || true
  [[ $got == 1 ]] || die "the database lock $lock: not ours within $DATABASE_LOCK_SECONDS s (another host's run holds it)"
  log "$1: the database lock $lock is ours"
  "$1"
  exec {input}>&-
  wait "$session" || true
}

# ops_action ACTION ARGS... (ops_change): but the actions that would change one host of the group only: a
# release, and new secrets, reach every host as a new launch template version or a new host (docs/scale-out.md).
ops_action_scale_out() {
  case $1 in
    release) die "release: the group's hosts deploy the launch template's release_ref; set it and apply, and the instance refresh rolls it out (docs/scale-out.md)" ;;
    rollback) die "rollback: set release_ref back and apply; the instance refresh rolls it out (docs/scale-out.md)" ;;
    rotate-secrets) die "rotate-secrets: new secrets reach the group's hosts as new hosts, through an instance refresh (docs/scale-out.md)" ;;
    *) "ops_${1//-/_}" "${@:2}" ;;
  esac
}
