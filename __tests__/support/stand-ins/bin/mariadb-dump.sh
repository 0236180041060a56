#!/bin/bash
# mariadb-dump: the real one, on the harness's server (its socket, DB_SOCKET) or, for the scale-out
# topology (DB_SOCKET empty), the database the environment names over TCP.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record mariadb-dump "$@"
client=("$REAL_MARIADB_DUMP" --no-defaults)
if [[ -n $DB_SOCKET ]]; then client+=("--socket=$DB_SOCKET"); fi
exec "${client[@]}" "$@"
