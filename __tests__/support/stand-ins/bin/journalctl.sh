#!/bin/bash
# journalctl: the machine's real journalctl on the harness's own journal file (JOURNAL_FILE, which
# the harness appends entries to with systemd-journal-remote: appendJournal), so that cursors, unit
# filters and the JSON output are journald's own; no journal of this machine's is read.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record journalctl "$@"
if [[ ! -f $JOURNAL_FILE ]]; then exit 0; fi
exec "$REAL_JOURNALCTL" --file="$JOURNAL_FILE" "$@"
