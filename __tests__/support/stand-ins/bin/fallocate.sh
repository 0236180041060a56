#!/bin/bash
# fallocate: a small sparse file (a test must not write 2 GiB), large enough for mkswap.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record fallocate "$@"
truncate -s 64K "${!#}"
