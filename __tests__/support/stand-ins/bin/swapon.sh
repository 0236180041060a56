#!/bin/bash
# swapon: keeps the active swap files in SWAP_STATE (`--show` lists them); step 13 fails when its fault is armed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record swapon "$@"
if [[ $1 == --show* ]]; then
  cat "$SWAP_STATE" 2>/dev/null
  exit 0
fi
fail step_13_enable_swap
printf '%s\n' "${!#}" >>"$SWAP_STATE"
