#!/bin/bash
# systemctl: records the call; steps 3 and 15 fail when their fault is armed. The database's unit runs
# DATABASE_CONTROL (the data-volume mode) and the app's unit APP_CONTROL (the app mode) where the
# harness gives them; is-enabled answers for the units enabled so far, and NeedDaemonReload for the units
# STALE_UNITS lists (a file changed since the last daemon-reload); every other call does nothing.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record systemctl "$@"
if [[ $* == "start mariadb" ]]; then fail step_03_start_database; fi
# Step 15's reload, after it wrote the app's unit.
if [[ $* == daemon-reload && -f $UNIT_DIRECTORY/$APP_SERVICE ]]; then fail step_15_install_service; fi
unit=${!#}
# is-enabled as systemd answers it: true once an enable named the unit (ENABLED_UNITS lists them).
case $1 in
  is-enabled) exec grep -qxF -- "$unit" "$ENABLED_UNITS" 2>/dev/null ;;
  enable) printf '%s\n' "$unit" >>"$ENABLED_UNITS" ;;
  daemon-reload) rm -f -- "$STALE_UNITS" ;;
esac
if [[ $* == "show -p NeedDaemonReload --value $unit" ]]; then
  if grep -qxF -- "$unit" "$STALE_UNITS" 2>/dev/null; then echo yes; else echo no; fi
  exit 0
fi
if [[ -n $DATABASE_CONTROL && ${unit%.service} == "$DATABASE_UNIT" ]]; then
  case " $* " in
    *" stop "*) exec "$DATABASE_CONTROL" stop ;;
    *" start "* | *" restart "* | *" --now "*) exec "$DATABASE_CONTROL" start ;;
  esac
fi
if [[ -n $APP_CONTROL && $unit == "$APP_SERVICE" ]]; then
  case " $* " in
    *" show "*) exec "$APP_CONTROL" "$@" ;;
    *" restart "*) if fault ops:kill-restart; then kill_script; fi; exec "$APP_CONTROL" restart ;;
    *" stop "*) exec "$APP_CONTROL" stop ;;
    *" start "* | *" --now "*) exec "$APP_CONTROL" start ;;
  esac
fi
