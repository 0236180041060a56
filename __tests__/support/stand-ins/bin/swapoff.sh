#!/bin/bash
# swapoff: drops the file from SWAP_STATE.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record swapoff "$@"
grep -vxF "${!#}" "$SWAP_STATE" >"$SWAP_STATE.new" || true
mv "$SWAP_STATE.new" "$SWAP_STATE"
