#!/bin/bash
# chown: the real one; on the new .env of step 11, that step's fault fails it or kills the script.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record chown "$@"
if [[ ${!#} == */.env.provision-* ]]; then
  fail step_11_write_env_file
  if fault kill:step_11_write_env_file; then kill_script; fi
fi
exec "$REAL_CHOWN" "$@"
