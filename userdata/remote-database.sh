#!/bin/bash
# The scale-out topology's hosts (setting "topology": "scale-out", docs/scale-out.md): the database is
# Amazon RDS for MariaDB, shared by every host of the Auto Scaling group and reached over TCP at
# DB_HOST:DB_PORT as the app's account; the app's public name is the load balancer's (or the domain's),
# which the header's FRONTEND_URI and BACKEND_URI hold.
#
# The hosts hold no administrator's secret. The master user's name and password, which RDS keeps in
# Secrets Manager, reach one host only for db-setup (ops_db_setup: `npm run ops -- <stack> db-setup`, run
# with the operator's rights), on its standard input: the database and the app's account for the current
# app_db_password (steps 5 and 6). A host waits at step 4 for that account, and does the rest as it.
#
# Function definitions only: the scale-out topology's definitions (NAME_scale_out) of the functions that
# provision.sh and ops.sh run through `variant TOPOLOGY NAME` (provision.sh says how): the database's
# administrator (load_database_admin), steps 3, 4, 6 and 8, step 9 one host at a time
# (one_host_at_a_time) and the public name (read_public_hostname); and db-setup's work (db_setup_scale_out).
# The ops actions that would change one host where the whole group must change are refused by the tool's
# dispatcher, as userdata/ops-actions.ts declares them.
# shellcheck disable=SC2154,SC2034 # the variables come from the rendered header; those set here, provision.sh's functions read

# No administrator at boot: step 4 makes the app's account the one root_sql logs in as. No root password
# either (redact reads its form).
load_database_admin_scale_out() {
  DB_ADMIN_USER='' DB_ADMIN_PASSWORD='' DB_ROOT_PASSWORD='' DB_ROOT_PASSWORD_B64=''
}

# read_master_secret: the master user (DB_ADMIN_USER, DB_ADMIN_PASSWORD, and DB_ROOT_PASSWORD_B64 for
# redact) from the JSON of the secret RDS manages ({"username": …, "password": …}) on standard input,
# parsed by python3 (on every Amazon Linux 2023 image): never an argument, a file or the environment.
read_master_secret() {
  local fields=()
  # shellcheck disable=SC2016 # Python, not shell
  mapfile -d '' -t fields < <(python3 -c 'import json, sys
secret = json.load(sys.stdin)
sys.stdout.write(secret["username"] + "\0" + secret["password"])' 2>/dev/null || true)
  [[ ${#fields[@]} == 2 && ${fields[0]} =~ ^[A-Za-z0-9_]{1,32}$ ]] ||
    die "db-setup reads the database's master secret on standard input, as RDS keeps it in Secrets Manager ({\"username\": …, \"password\": …}); got something else"
  DB_ADMIN_USER=${fields[0]}
  printf -v DB_ROOT_PASSWORD_B64 '%s' "$(printf '%s' "${fields[1]}" | base64 -w0)"
  decode_secret DB_ROOT_PASSWORD "database master password"
  DB_ADMIN_PASSWORD=$DB_ROOT_PASSWORD
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

# app_login: the app's account that app_db_password logs in to, of the two (app_account), into APP_DB_LOGIN
# (step 4; ops db, whose app may be on either).
app_login() {
  local user
  for user in "$APP_DB_USER" "${APP_DB_USER}_b"; do
    if printf 'SELECT 1;\n' | MYSQL_PWD=$APP_DB_PASSWORD mariadb --host="$DB_HOST" --port="$DB_PORT" --user="$user" --connect-timeout=5 "$DATABASE_NAME" >/dev/null 2>&1; then
      APP_DB_LOGIN=$user
      return 0
    fi
  done
  return 1
}

# What a host says when neither of the app's accounts takes app_db_password (db-setup makes them).
no_app_login() { printf 'no account of the app (%s, %s_b) takes app_db_password' "$APP_DB_USER" "$APP_DB_USER"; }

# Step 4 on a host of the group: it waits, at most DATABASE_SETUP_WAIT_SECONDS, for the app's account that
# db-setup makes (a rotation's new app_db_password included), then logs in as it for the rest of the run:
# step 5 and step 9 need only its privileges on the one database (APP_DB_GRANTS).
step_04_set_root_password_scale_out() {
  local deadline=$((SECONDS + DATABASE_SETUP_WAIT_SECONDS)) next=0
  until app_login; do
    ((SECONDS < deadline)) || die "$(no_app_login) after $DATABASE_SETUP_WAIT_SECONDS s: run \`npm run ops -- <stack> db-setup --host <a host>\` (docs/scale-out.md); the group replaces this host"
    if ((SECONDS >= next)); then
      log "$(no_app_login) yet: waiting for \`npm run ops -- <stack> db-setup --host <a host>\` (docs/scale-out.md)"
      next=$((SECONDS + 60))
    fi
    sleep 5
  done
  DB_ADMIN_USER=$APP_DB_LOGIN DB_ADMIN_PASSWORD=$APP_DB_PASSWORD
  log "the app's account $APP_DB_LOGIN logs in to $DB_HOST"
}

# Step 6 on a host of the group: the account is db-setup's (step 4 found it).
step_06_create_app_user_scale_out() {
  log "the database user $APP_DB_LOGIN@$APP_DB_USER_HOST is db-setup's: this host logs in as it"
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

# one_host_at_a_time STEP (run_step, db_setup): runs STEP while a session of DB_ADMIN_USER holds the database's
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

# db_setup_scale_out (ops_db_setup): the master user from standard input (read_master_secret) and
# app_db_password from Parameter Store; then, as the master user, steps 3 and 5, and step 6 (the account
# whose password is app_db_password, app_account) under the database lock. Set up already: it changes nothing.
db_setup_scale_out() {
  read_master_secret
  variant SECRETS load_secrets
  {
    step_03_start_database_scale_out
    root_sql 'SELECT 1;' >/dev/null || die "the database refuses its master user $DB_ADMIN_USER with that secret's password"
    step_05_create_database
    one_host_at_a_time_scale_out create_app_account
    log "db-setup: the database $DATABASE_NAME and its account $APP_DB_LOGIN@$APP_DB_USER_HOST for app_db_password are in place"
  } 2>&1 | redact
}
