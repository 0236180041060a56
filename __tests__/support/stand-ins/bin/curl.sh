#!/bin/bash
# curl: the nvm installer's address gets the stand-in installer (nvm-install.sh, with the stand-ins'
# directory written in); step 12 fails when its fault is armed. Any other address: the real curl.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
for arg in "$@"; do
  if [[ $arg == "$NVM_INSTALL_URL" ]]; then
    record curl "$@"
    fail step_12_install_node
    out=- prev=''
    for a in "$@"; do
      if [[ $prev == -o || $prev == --output ]]; then out=$a; fi
      prev=$a
    done
    installer=$(printf '#!/bin/bash\nSTAND_INS=%q\n' "$(cd "${BASH_SOURCE[0]%/*}/.." && pwd)"; sed 1d "${BASH_SOURCE[0]%/*}/../nvm-install.sh")
    if [[ $out == - ]]; then printf '%s\n' "$installer"; else printf '%s\n' "$installer" >"$out"; fi
    exit 0
  fi
done
record curl "$@"
exec "$REAL_CURL" "$@"
