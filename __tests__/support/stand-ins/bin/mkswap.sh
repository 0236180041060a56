#!/bin/bash
# mkswap: the real one, on the small file the fallocate stand-in makes: blkid then sees a real swap signature.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record mkswap "$@"
exec "$REAL_MKSWAP" "$@"
