#!/bin/bash
# runuser: the real one; with the fault `ops:kill-at:WORDS` armed, SIGKILL to the script under test
# instead of the call whose arguments (after --) contain WORDS: a kill at that exact line of the script.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
if [[ -f $FAULT_FILE ]]; then
  armed=$(<"$FAULT_FILE")
  if [[ $armed == ops:kill-at:* && " ${*#* -- } " == *" ${armed#ops:kill-at:}"* ]]; then kill_script; fi
fi
exec "$REAL_RUNUSER" "$@"
