#!/bin/bash
# npm run synth|diff|deploy|destroy: `cdktf <command> <the user's arguments>`, after the settings check, with
# every file it writes for the operator alone. The plans cdktf leaves in cdktf.out/stacks/<stack>/, the
# local state and Terraform's temporary files hold the TF_VAR_ secrets: under umask 077 they are made 0600
# (directories 0700), and cdktf.out itself is kept 0700 (a clone made before this keeps its old mode).
# diff, deploy and destroy skip cdktf's `terraform providers lock`: it asks the public registry for
# linux_amd64 checksums, which only a remote (Terraform Cloud) plan needs, and which a machine whose
# Terraform gets providers from a mirror cannot reach; `terraform init` still writes the lock file.
# Without a terminal, deploy and destroy can only run with --auto-approve: cdktf's prompt (Ink) dies with
# a stack trace when standard input is no terminal, so this says so in one line first (exit 2).
set -euo pipefail

# require_approval_means COMMAND ARGS...: deploy or destroy without a terminal and without --auto-approve stops here.
require_approval_means() {
  local command=$1 arg
  shift
  case "$command" in deploy | destroy) ;; *) return 0 ;; esac
  [[ -t 0 ]] && return 0
  for arg in "$@"; do [[ "$arg" == --auto-approve ]] && return 0; done
  echo "npm run $command: no terminal to ask for approval; add --auto-approve (npm run $command -- --auto-approve …) to $command without asking" >&2
  exit 2
}

# private_output: files created from here on are the operator's alone; cdktf.out (the default output) is 0700.
private_output() {
  umask 077
  mkdir -p cdktf.out
  chmod 700 cdktf.out
}

# lock_option COMMAND ARGS...: the option that skips the registry's lock, for the commands that have it, unless given.
lock_option() {
  local command=$1 arg
  shift
  for arg in "$@"; do [[ "$arg" == --skip-provider-lock ]] && return 0; done
  case "$command" in diff | deploy | destroy) echo --skip-provider-lock ;; esac
}

main() {
  local command=$1
  shift
  require_approval_means "$command" "$@"
  npm run -s check:settings
  private_output
  # shellcheck disable=SC2046 # one word or none
  CHECKPOINT_DISABLE=1 exec cdktf "$command" $(lock_option "$command" "$@") "$@"
}

main "$@"
