#!/usr/bin/env bash
# Releases a git ref of the application onto the running host from a GitHub job: the operations
# command `npm run ops -- STACK release REF`, which finds the host from the stack's outputs and
# reaches it with ssh. Run by .github/workflows/release.yml from the repository's root, after
# `terraform init` of the stack (the outputs are read from its state).
#
# Usage: scripts/ci/release.sh [--check] STACK REF
#   --check  only check the request (REF and SSH_HOST_KEYS, before anything is installed)
#   REF      the application's branch, tag or commit: a name `git check-ref-format` accepts
# Environment:
#   SSH_PRIVATE_KEY  the key pair's private key (the release environment's secret). It goes to a
#                    file only this user can read under $RUNNER_TEMP, named to the operations
#                    command by CRM_OPS_SSH_KEY, and leaves the environment of every command run
#                    here; the file is removed when this script ends, whatever the outcome.
#   SSH_HOST_KEYS    the host's public keys, one `TYPE BASE64` line each (a variable). They go to
#                    ~/.ssh/known_hosts, for any host name: ssh checks the host's key as always,
#                    and an unknown or changed key stops the release before anything is sent.
# The outcome is added to $GITHUB_STEP_SUMMARY. Exit code: the operations command's; 2 a refused
# request or setting.
set -euo pipefail

refuse() { echo "::error title=$1::$2"; exit 2; }
check=0
if [[ "${1:-}" == --check ]]; then check=1; shift; fi
(($# == 2)) || { sed -n '2,19p' "$0" >&2; exit 2; }
stack=$1 ref=$2

[[ "$ref" != -* ]] && git check-ref-format --allow-onelevel "$ref" 2>/dev/null \
  || refuse "Bad ref" "ref '$ref' is not a git branch, tag or commit name (git check-ref-format refuses it)"
[[ -n "${SSH_HOST_KEYS:-}" ]] \
  || refuse "Missing setting" "variable SSH_HOST_KEYS is not set: the host's public SSH keys (see docs/github-actions.md)"
host_keys=() n=0
while read -r type blob _; do
  n=$((n + 1))
  [[ -n "$type" ]] || continue
  [[ "$type" =~ ^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521))$ && "$blob" =~ ^[A-Za-z0-9+/]+=*$ ]] \
    || refuse "Bad setting" "variable SSH_HOST_KEYS, line $n: expected 'TYPE BASE64' with TYPE ssh-ed25519, ssh-rsa or ecdsa-sha2-nistp256/384/521, found a line starting '${type:0:24}'"
  host_keys+=("* $type $blob")
done <<< "$SSH_HOST_KEYS"
((${#host_keys[@]} > 0)) || refuse "Bad setting" "variable SSH_HOST_KEYS holds no host key line"
if ((check)); then
  echo "release: request checked: $ref to $stack, ${#host_keys[@]} host key(s)"
  exit 0
fi

: "${RUNNER_TEMP:?release: RUNNER_TEMP is not set (run it in a GitHub Actions job)}"
: "${GITHUB_STEP_SUMMARY:?release: GITHUB_STEP_SUMMARY is not set}"
[[ -n "${SSH_PRIVATE_KEY:-}" ]] \
  || refuse "Missing setting" "secret SSH_PRIVATE_KEY of the release environment is not set (see docs/github-actions.md)"

umask 077
key=$(mktemp "$RUNNER_TEMP/ssh-key.XXXXXX")
trap 'rm -f "$key"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
printf '%s\n' "$SSH_PRIVATE_KEY" > "$key"
unset SSH_PRIVATE_KEY
mkdir -p ~/.ssh
printf '%s\n' "${host_keys[@]}" >> ~/.ssh/known_hosts

status=0
CRM_OPS_SSH_KEY=$key npm run ops -- "$stack" release "$ref" || status=$?
if ((status == 0)); then
  echo "### Released \`$ref\` to \`$stack\`" >> "$GITHUB_STEP_SUMMARY"
else
  echo "### Release of \`$ref\` to \`$stack\` failed (exit $status): the log of this step says why" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
