# shellcheck shell=bash
# The stand-in nvm (what ~/.nvm/nvm.sh loads once nvm-install.sh ran): `nvm` records its calls and, on
# install, puts recording `node` and `npm` (node.sh, npm.sh) under ~/.nvm/versions/node/v<NODE_VERSION>/bin.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "${BASH_SOURCE[0]%/*}/lib.sh"
NVM_STAND_INS=$(cd "${BASH_SOURCE[0]%/*}" && pwd)

nvm() {
  printf '%s\n' "nvm $*" >>"$CALLS"
  if [[ ${1:-} == install ]]; then
    local bin="$HOME/.nvm/versions/node/v$NODE_VERSION/bin" tool
    mkdir -p "$bin"
    for tool in node npm; do
      printf '#!/bin/bash\nexec %q "$@"\n' "$NVM_STAND_INS/$tool.sh" >"$bin/$tool"
      chmod 755 "$bin/$tool"
    done
  fi
}
