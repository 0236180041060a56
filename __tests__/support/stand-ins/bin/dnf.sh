#!/bin/bash
# dnf: records the call; steps 1 and 2 fail when their fault is armed. `needs-restarting -r` answers as
# dnf-plugins-core does on Amazon Linux 2023: a reboot is needed once a test creates NEEDS_REBOOT.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record dnf "$@"
if [[ $* == *upgrade* ]]; then fail step_01_update_packages; else fail step_02_install_packages; fi
if [[ $* == "needs-restarting -r" ]]; then
  if [[ -f $NEEDS_REBOOT ]]; then
    printf '%s\n' 'Core libraries or services have been updated since boot-up:' '  * kernel' '' 'Reboot is required to fully utilize these updates.'
    exit 1
  fi
  printf '%s\n' 'No core libraries or services have been updated since boot-up.' 'Reboot should not be necessary.'
fi
