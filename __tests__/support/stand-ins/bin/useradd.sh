#!/bin/bash
# useradd: records the call and the user (USERS_FILE, which the id stand-in answers from); creates no user here.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record useradd "$@"
printf '%s\n' "${!#}" >>"$USERS_FILE"
