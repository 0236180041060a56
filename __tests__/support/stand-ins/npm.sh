#!/bin/bash
# The stand-in npm: records its call; `npm install -g yarn` puts a recording yarn (yarn.sh) beside it.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "${BASH_SOURCE[0]%/*}/lib.sh"
printf '%s\n' "npm $*" >>"$CALLS"
if [[ "$*" == "install -g yarn" ]]; then
  bin="$HOME/.nvm/versions/node/v$NODE_VERSION/bin"
  printf '#!/bin/bash\nexec %q "$@"\n' "$(cd "${BASH_SOURCE[0]%/*}" && pwd)/yarn.sh" >"$bin/yarn"
  chmod 755 "$bin/yarn"
fi
