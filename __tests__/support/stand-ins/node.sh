#!/bin/bash
# The stand-in node: records its call.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "${BASH_SOURCE[0]%/*}/lib.sh"
printf '%s\n' "node $*" >>"$CALLS"
