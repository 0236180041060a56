#!/bin/bash
# git: the real one; `git config` fails when step 7's fault is armed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
if [[ $* == config* ]]; then fail step_07_configure_git; fi
exec "$REAL_GIT" "$@"
