#!/bin/bash
# flock: records the call, then the real one (the test sees which runs take the ops lock, and which only read it).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record flock "$@"
exec "$REAL_FLOCK" "$@"
