#!/bin/bash
# curl: the nvm installer's address gets the stand-in installer (nvm-install.sh, with the stand-ins'
# directory written in); step 12 fails when its fault is armed. Caddy's address (the settings' caddyUrl) gets the
# stand-in release. The app's address (the ops command's health checks): a signal to the action when an
# ops:*-health fault is armed. An AWS endpoint (https://<service>.<region>.amazonaws.com/, the telemetry's signed
# calls): moto's server (AWS_ENDPOINT), which takes the service from the signature, as the aws stand-in sends the
# AWS CLI there. Any other address: the real curl.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"

# output ARGS...: where curl's arguments send the body (-o/--output), - for standard output.
output() {
  local out=- prev='' a
  for a in "$@"; do
    if [[ $prev == -o || $prev == --output ]]; then out=$a; fi
    prev=$a
  done
  printf '%s' "$out"
}

# Caddy's address: the stand-in release (a tarball of a caddy that prints its version).
if [[ " $* " == *" $CADDY_URL "* ]]; then
  record curl "$@"
  exec cp "$CADDY_TARBALL" "$(output "$@")"
fi
for arg in "$@"; do
  if [[ $arg == "$NVM_INSTALL_URL" ]]; then
    record curl "$@"
    fail step_12_install_node
    out=$(output "$@")
    installer=$(printf '#!/bin/bash\nSTAND_INS=%q\n' "$(cd "${BASH_SOURCE[0]%/*}/.." && pwd)"; sed 1d "${BASH_SOURCE[0]%/*}/../nvm-install.sh")
    if [[ $out == - ]]; then printf '%s\n' "$installer"; else printf '%s\n' "$installer" >"$out"; fi
    exit 0
  fi
done
record curl "$@"
# The ops command's health checks: a signal to the action (once), as the fault says.
if [[ $* == *"http://127.0.0.1:$APP_PORT/"* ]]; then
  for sig in kill hup term int pipe; do
    if fault "ops:$sig-health"; then
      rm -f "$FAULT_FILE"
      read -r -a st </proc/$$/stat
      if [[ $sig == kill ]]; then kill -KILL -- "-${st[4]}"; else kill -s "${sig^^}" -- "${st[4]}"; fi
    fi
  done
fi
args=()
for arg in "$@"; do
  if [[ -n $AWS_ENDPOINT && $arg =~ ^https://[a-z0-9-]+\.[a-z0-9-]+\.amazonaws\.com/ ]]; then arg=$AWS_ENDPOINT/${arg#https://*/}; fi
  args+=("$arg")
done
exec "$REAL_CURL" "${args[@]}"
