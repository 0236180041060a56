#!/bin/bash
# nft: records the call and keeps the rules it was given in NFT_RULES (the VM boot test runs nft for real).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record nft "$@"
cat >>"$NFT_RULES"
