#!/bin/bash
# journalctl: the app unit's journal (the app mode) is what its supervisor wrote (APP_STATE/app.log);
# `-u <unit>`, `-n <lines>` and `--since` are recorded and `-n` honoured; other units have no lines.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record journalctl "$@"
unit='' lines=10
while (($#)); do
  case $1 in
    -u) unit=$2; shift 2 ;;
    -n) lines=$2; shift 2 ;;
    *) shift ;;
  esac
done
if [[ ${unit%.service}.service == "$APP_SERVICE" && -f $APP_STATE/app.log ]]; then tail -n "$lines" "$APP_STATE/app.log"; fi
