#!/bin/bash
# The stand-in nvm installer, which bin/curl.sh serves for NVM_INSTALL_URL with the line
# `STAND_INS=<this directory>` put in place of the #! line above: ~/.nvm/nvm.sh then loads nvm.sh here.
set -euo pipefail
: "${STAND_INS:?the stand-ins directory, which bin/curl.sh writes in}"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$STAND_INS/lib.sh"
printf '%s\n' "nvm-installer HOME=$HOME user=$(id -un)" >>"$CALLS"
mkdir -p "$HOME/.nvm"
printf 'source %q\n' "$STAND_INS/nvm.sh" >"$HOME/.nvm/nvm.sh"
