#!/bin/bash
# id: a user the useradd stand-in created (uid 990), caddy as missing until then (whatever this machine has);
# any other question to the real id.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
user=${!#}
if [[ $user == caddy ]] || grep -qxF -- "$user" "$USERS_FILE" 2>/dev/null; then
  if ! grep -qxF -- "$user" "$USERS_FILE" 2>/dev/null; then
    echo "id: '$user': no such user" >&2
    exit 1
  fi
  if [[ $1 == -u ]]; then echo 990; else echo "uid=990($user) gid=990($user) groups=990($user)"; fi
  exit 0
fi
exec "$REAL_ID" "$@"
