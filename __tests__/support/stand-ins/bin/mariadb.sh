#!/bin/bash
# mariadb (and mysql, the same file): the real client, on the harness's server (its socket, DB_SOCKET)
# or, for the scale-out topology (DB_SOCKET empty), the database the script names over TCP. The SQL it
# is given decides which step's fault fails it; step 9's kill fault imports half of the file first; the
# rotation's kill faults cut off the ops command around the passwords.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record "${0##*/}" "$@"
client=("$REAL_MARIADB" --no-defaults)
if [[ -n $DB_SOCKET ]]; then client+=("--socket=$DB_SOCKET"); fi
# A session that talks with the client statement by statement (the scale-out topology's database lock): as it is.
if [[ " $* " == *" --unbuffered "* ]]; then exec "${client[@]}" "$@"; fi
sql=$(cat; echo .)
sql=${sql%.}
case $sql in
  *"SET PASSWORD"*) fail step_04_set_root_password ;;
  *"CREATE DATABASE IF NOT EXISTS"*) fail step_05_create_database ;;
  *"CREATE USER"*) fail step_06_create_app_user ;;
esac
# rotate-secrets cut off: before the root password, or after the app user's.
if [[ $sql == *"SET PASSWORD FOR 'root'"* ]] && fault ops:kill-before-root-password; then kill_script; fi
if [[ $sql == *"ALTER USER"* ]] && fault ops:kill-after-app-password; then
  printf '%s' "$sql" | "${client[@]}" "$@"
  kill_script
fi
if [[ $* != *--user=root* ]]; then
  fail step_09_import_database
  if fault kill:step_09_import_database; then
    mapfile -t lines <<<"$sql"
    printf '%s\n' "${lines[@]:0:${#lines[@]}/2}" | "${client[@]}" "$@"
    kill_script
  fi
fi
printf '%s' "$sql" | "${client[@]}" "$@"
