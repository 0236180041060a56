#!/bin/bash
# The host side of `npm run ops -- <stack> restore --drill` (docs/operations.md, "Everyday tasks"):
# scripts/ops-everyday.ts sends it over ssh to `sudo -n bash -c`, after a header (DATABASE_NAME,
# DATA_FILE_SYSTEM, DEVICE_DIR) and before its last line, `drill_main <volume id>`, once EC2 has
# attached the scratch volume made from the snapshot. It mounts the volume in a scratch directory,
# starts a throwaway mariadbd on its data (its own socket, no networking), compares the tables and
# their row counts with the live database's, and undoes all of it (drill_cleanup) however it ends.
# The live database and the data volume are only read.
#
# Function definitions only (the last line is the workstation's).
# shellcheck disable=SC2154 # the variables come from the header

# drill_main VOLUME_ID: the drill, in a scratch directory that drill_cleanup removes on any exit.
drill_main() {
  set -euo pipefail
  DRILL_DIR=$(mktemp -d /run/crm-restore-drill.XXXXXX) DRILL_PID=''
  trap drill_cleanup EXIT
  # The server runs as the data's owner (mysql), who must reach the data inside.
  chmod 711 "$DRILL_DIR"
  trap 'exit 1' HUP INT PIPE TERM
  local device
  device=$(drill_device "$1")
  echo "drill: $1 is $device"
  drill_mount "$device"
  drill_check "$DRILL_DIR/mnt/mysql"
}

# drill_device VOLUME_ID: the scratch volume's device, as find_data_volume (userdata/local-database.sh)
# finds the data volume: by its serial (NVMe, virtio), else the name it was attached as; waits 120 s.
drill_device() {
  local serial=${1//-/} deadline=$((SECONDS + 120)) candidate
  while ((SECONDS < deadline)); do
    for candidate in "$DEVICE_DIR"/disk/by-id/*[-_]"$serial" "$DEVICE_DIR/sdg" "$DEVICE_DIR/xvdg"; do
      if [[ -b $candidate ]]; then
        readlink -f "$candidate"
        return 0
      fi
    done
    sleep 1
  done
  echo "drill: the volume $1 did not appear within 120 s" >&2
  return 1
}

# drill_mount DEVICE: its file system at DRILL_DIR/mnt. A copy of the data volume's XFS has its UUID,
# which XFS refuses twice unless told (nouuid); the scratch copy is written to only by InnoDB's recovery.
drill_mount() {
  local options=noatime
  [[ $(blkid -p -o value -s TYPE "$1") != xfs ]] || options+=,nouuid
  mkdir "$DRILL_DIR/mnt"
  mount -o "$options" "$1" "$DRILL_DIR/mnt"
  [[ -d $DRILL_DIR/mnt/mysql ]] || { echo "drill: no mysql directory on the volume" >&2; return 1; }
}

# drill_check DATADIR: a throwaway server on DATADIR, then the comparison; the server is stopped after.
drill_check() {
  local status=0
  drill_start "$1"
  drill_compare || status=$?
  drill_stop
  return $status
}

# drill_server: the MariaDB server's program (Amazon Linux keeps it in /usr/libexec).
drill_server() {
  local path
  for path in "$(command -v mariadbd)" "$(command -v mysqld)" /usr/libexec/mariadbd /usr/sbin/mariadbd; do
    if [[ -x $path ]]; then
      echo "$path"
      return 0
    fi
  done
  echo "drill: no mariadbd on this host" >&2
  return 1
}

# drill_start DATADIR: mariadbd on DATADIR as its owner, its socket, logs and temporary files in a
# directory of that owner's in DRILL_DIR (DRILL_RUN), no networking; waits at most 300 s for it to
# answer (InnoDB's crash recovery runs first).
drill_start() {
  local server owner deadline=$((SECONDS + 300))
  server=$(drill_server)
  owner=$(stat -c %U "$1")
  DRILL_RUN=$DRILL_DIR/server
  install -d -o "$owner" -m 700 "$DRILL_RUN"
  "$server" --no-defaults --datadir="$1" --socket="$DRILL_RUN/drill.sock" --skip-networking --user="$owner" \
    --pid-file="$DRILL_RUN/drill.pid" --log-error="$DRILL_RUN/drill.err" --tmpdir="$DRILL_RUN" --innodb-buffer-pool-size=64M \
    --skip-grant-tables --skip-slave-start --skip-log-bin </dev/null &>/dev/null &
  DRILL_PID=$!
  until drill_sql --socket="$DRILL_RUN/drill.sock" <<<'SELECT 1' &>/dev/null; do
    if ! kill -0 "$DRILL_PID" 2>/dev/null || ((SECONDS > deadline)); then
      # Its errors first (a crash's stack trace and limits would push them out of a plain tail).
      echo "drill: the snapshot's database did not start; its errors, then its last lines:" >&2
      grep -E '\[(ERROR|FATAL)\]|Assertion|signal [0-9]+' "$DRILL_RUN/drill.err" | head -n 20 >&2 || true
      tail -n 5 "$DRILL_RUN/drill.err" >&2 || true
      return 1
    fi
    sleep 1
  done
}

# drill_sql [CLIENT OPTIONS]: SQL from standard input as root, tab-separated rows without names.
drill_sql() {
  mariadb --user=root --batch --skip-column-names "$@"
}

# drill_counts [CLIENT OPTIONS]: "table<TAB>rows" for each base table of DATABASE_NAME, by name.
drill_counts() {
  local tables sql=''
  tables=$(drill_sql "$@" <<<"SELECT table_name FROM information_schema.tables WHERE table_schema = '$DATABASE_NAME' AND table_type = 'BASE TABLE' ORDER BY 1;")
  while IFS= read -r table; do
    [[ -n $table ]] || continue
    sql+="${sql:+ UNION ALL }SELECT '${table//\'/\'\'}', COUNT(*) FROM \`$DATABASE_NAME\`.\`${table//\`/\`\`}\`"
  done <<<"$tables"
  [[ -z $sql ]] || drill_sql "$@" <<<"$sql;"
}

# drill_compare: the tables and row counts of the live database and of the snapshot's, side by side;
# fails when the snapshot's database lacks a table or cannot be read.
drill_compare() {
  local live snapshot
  live=$(drill_counts)
  snapshot=$(drill_counts --socket="$DRILL_RUN/drill.sock")
  printf '%-32s %12s %12s\n' table live snapshot
  LC_ALL=C join -t $'\t' -a 1 -a 2 -e - -o 0,1.2,2.2 <(LC_ALL=C sort -t $'\t' -k 1,1 <<<"$live") <(LC_ALL=C sort -t $'\t' -k 1,1 <<<"$snapshot") |
    awk -F '\t' '$1 != "" { printf "%-32s %12s %12s\n", $1, $2, $3; n++; if ($2 != $3) d++; if ($3 == "-") m++ }
      END { printf "drill: %d tables; %d with other row counts than the live database (rows changed since the snapshot); %d missing from the snapshot\n", n, d, m; exit (m > 0 ? 1 : 0) }'
}

# drill_stop: the throwaway server stopped (TERM, then KILL after 60 s).
drill_stop() {
  [[ -n ${DRILL_PID:-} ]] || return 0
  kill -TERM "$DRILL_PID" 2>/dev/null || true
  local deadline=$((SECONDS + 60))
  while kill -0 "$DRILL_PID" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
  kill -KILL "$DRILL_PID" 2>/dev/null || true
  wait "$DRILL_PID" 2>/dev/null || true
  DRILL_PID=''
}

# drill_cleanup: whatever the drill made, undone: the server, the mount, the scratch directory.
drill_cleanup() {
  local status=$?
  drill_stop
  # Never rm -rf through a mount: a copy still mounted keeps its directory, named.
  # findmnt reads the mount table: mountpoint stats the directory, which a shut-down XFS answers with EIO.
  if findmnt -rn -M "$DRILL_DIR/mnt" >/dev/null && ! umount "$DRILL_DIR/mnt" && ! umount -l "$DRILL_DIR/mnt"; then
    echo "drill: $DRILL_DIR/mnt stays mounted (umount refused); its directory is left" >&2
    exit 1
  fi
  rm -rf "$DRILL_DIR"
  echo "drill: cleaned up (exit $status)" >&2
  exit "$status"
}
