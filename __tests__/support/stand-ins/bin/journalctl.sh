#!/bin/bash
# journalctl: once the harness has a journal file of its own (JOURNAL_FILE, which it appends entries to with
# systemd-journal-remote: appendJournal), the machine's real journalctl on that file, so that cursors, unit
# filters and the JSON output are journald's own; no journal of this machine's is read. Before that, the app
# unit's journal is what its supervisor wrote (APP_STATE/app.log): `-u <unit>`, `-n <lines>` and `--since`
# are recorded and `-n` honoured; other units have no lines.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record journalctl "$@"
if [[ -n ${JOURNAL_FILE:-} && -f $JOURNAL_FILE ]]; then exec "$REAL_JOURNALCTL" --file="$JOURNAL_FILE" "$@"; fi
unit='' lines=10
while (($#)); do
  case $1 in
    -u) unit=$2; shift 2 ;;
    -n) lines=$2; shift 2 ;;
    *) shift ;;
  esac
done
if [[ ${unit%.service}.service == "$APP_SERVICE" && -f $APP_STATE/app.log ]]; then tail -n "$lines" "$APP_STATE/app.log"; fi
