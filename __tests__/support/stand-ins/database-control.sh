#!/bin/bash
# The database's unit in the data-volume mode (bin/systemctl.sh runs it): `start` runs the real server
# on DATABASE_DIR, detached, after creating a data directory there only when it holds none (as Amazon
# Linux's mariadb-prepare-db-dir does); `stop` shuts it down cleanly.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "${BASH_SOURCE[0]%/*}/lib.sh"
running() { [[ -f $PID_FILE ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }
case $1 in
  start)
    if running; then exit 0; fi
    if [[ ! -d $DATABASE_DIR/mysql ]]; then
      record database-init "$DATABASE_DIR"
      TMPDIR=$TMP_DIR timeout 120 "$REAL_MARIADB_INSTALL_DB" --no-defaults --datadir="$DATABASE_DIR" \
        --auth-root-authentication-method=socket --user=root --skip-test-db --skip-networking --tmpdir="$TMP_DIR" >/dev/null 2>&1
    fi
    record database-start "$DATABASE_DIR"
    # Detached, and holding none of the script's output pipes, nor its lock (fd 9, as a unit started by systemd).
    TMPDIR=$TMP_DIR setsid "$REAL_MARIADBD" --no-defaults --datadir="$DATABASE_DIR" --socket="$DB_SOCKET" \
      --skip-networking --tmpdir="$TMP_DIR" \
      --user=root --pid-file="$PID_FILE" --log-error="$DB_ERROR_LOG" --innodb-buffer-pool-size=32M \
      </dev/null >/dev/null 2>&1 9>&- &
    for ((i = 0; i < 300; i++)); do
      if "$REAL_MARIADB" --no-defaults --socket="$DB_SOCKET" --user=root -e 'SELECT 1' >/dev/null 2>&1; then exit 0; fi
      sleep 0.1
    done
    echo "database-control: the server did not start" >&2
    exit 1 ;;
  stop)
    if ! running; then exit 0; fi
    record database-stop "$DATABASE_DIR"
    pid=$(cat "$PID_FILE")
    kill "$pid"
    for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    exit 1 ;;
esac
