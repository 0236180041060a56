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

# cdk_cli: the project's CDK CLI: cdktf, or cdktn once scripts/cdktn/convert.sh moved the project to CDK Terrain
# (its words are rewritten there; a command held in a variable is not).
cdk_cli() {
  if [[ -x node_modules/.bin/cdktn ]]; then echo cdktn; else echo cdktf; fi
}

# wants_help ARGS...: whether the user asked for help (--help or -h), which needs neither a terminal nor settings.
wants_help() {
  local arg
  for arg in "$@"; do case "$arg" in --help | -h) return 0 ;; esac; done
  return 1
}

# show_help COMMAND: what this wrapper adds to cdktf COMMAND, then cdktf's own help for it; exit 0.
show_help() {
  local command=$1
  echo "npm run $command: cdktf $command after the settings check (npm run check:settings)," \
    "its files the operator's alone (0600)"
  case "$command" in
    deploy | destroy) echo "  without a terminal, add --auto-approve (npm run $command -- --auto-approve …)" ;;
  esac
  case "$command" in
    diff | deploy | destroy) echo "  --skip-provider-lock is added: terraform init still writes the lock file" ;;
  esac
  echo "  the arguments after -- go to cdktf $command:"
  echo
  quiet_cli_config
  CHECKPOINT_DISABLE=1 exec "$(cdk_cli)" "$command" --help
}

# quiet_cli_config: for what needs no provider (synth, help). cdktf runs `terraform version` several times, and each
# time Terraform warns of a TF_CLI_CONFIG_FILE naming a file that does not exist (cdktf logs it as an [ERROR]);
# an empty configuration in its place changes nothing else. One that exists (scripts/ci/env.sh's mirror) is kept.
quiet_cli_config() {
  if [[ -n "${TF_CLI_CONFIG_FILE:-}" && ! -e "$TF_CLI_CONFIG_FILE" ]]; then export TF_CLI_CONFIG_FILE=/dev/null; fi
}

# quiet_progress COMMAND ARGS...: where standard output is no terminal (a CI log, a pipe), cdktf's Ink leaves every
# frame of its spinner in the output; with CI=true Ink prints only the last one. Not where cdktf will ask for
# approval (deploy or destroy without --auto-approve): Ink would then show the question only once answered.
# A CI the user set (CI=false among them) is kept.
quiet_progress() {
  local command=$1 arg
  shift
  [[ -t 1 || -n "${CI+set}" ]] && return 0
  case "$command" in
    deploy | destroy)
      for arg in "$@"; do [[ "$arg" == --auto-approve ]] && export CI=true; done
      ;;
    *) export CI=true ;;
  esac
}

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

# destroy_then_tidy ARGS...: cdktf destroy, its standard output shown live and kept (tee) in a private temporary
# file (umask 077: 0600, removed on exit), then what Terraform leaves unsaid: on success, the saved plans of the
# destroyed stacks go and the state backups left are named; on Terraform's prevent_destroy refusal, our way out.
# It exits with cdktf's status. At a terminal, cdktf's colours are kept (FORCE_COLOR): its output is now a pipe.
destroy_then_tidy() {
  local log status=0
  log=$(mktemp)
  # shellcheck disable=SC2064 # the path is fixed now
  trap "rm -f '$log'" EXIT
  if [[ -t 1 && -z "${FORCE_COLOR+set}" ]]; then export FORCE_COLOR=1; fi
  # shellcheck disable=SC2046 # one word or none
  CHECKPOINT_DISABLE=1 "$(cdk_cli)" destroy $(lock_option destroy "$@") "$@" | tee "$log" || status=$?
  if ((status == 0)); then
    tidy_after_destroy "$@"
  else
    prevent_destroy_advice "$log" "$@"
  fi
  exit "$status"
}

# destroyed_stacks ARGS...: the stacks a destroy with these arguments works on, one a line: those named, else every
# one of cdktf.out/stacks (cdktf destroys the only one, or refuses to choose among several).
destroyed_stacks() {
  local arg dir named=0
  for arg in "$@"; do
    if [[ "$arg" != -* && -d "cdktf.out/stacks/$arg" ]]; then echo "$arg" && named=1; fi
  done
  ((named)) && return 0
  for dir in cdktf.out/stacks/*/; do [[ -d "$dir" ]] && basename "$dir"; done
  return 0
}

# tidy_after_destroy ARGS...: a destroyed stack's saved plan (cdktf.out/stacks/<stack>/plan, from diff or deploy)
# holds the secrets and plans for resources that are gone: removed. Its state backups (the state before each write,
# terraform.<stack>.tfstate.backup; one per state rm, cdktf.out/stacks/<stack>/terraform.tfstate.<n>.backup) hold
# them too, but they are the way back from a state rm or a destroy gone wrong: named, with how to wipe them.
tidy_after_destroy() {
  local stack file
  local -a plans=() backups=()
  while IFS= read -r stack; do
    if [[ -f "cdktf.out/stacks/$stack/plan" ]]; then plans+=("cdktf.out/stacks/$stack/plan"); fi
    for file in "terraform.$stack.tfstate"*.backup "cdktf.out/stacks/$stack/"*.tfstate*.backup; do
      if [[ -f "$file" ]]; then backups+=("$file"); fi
    done
  done < <(destroyed_stacks "$@")
  if ((${#plans[@]})); then
    rm -f -- "${plans[@]}"
    echo "npm run destroy: removed the saved plan, which held the secrets: ${plans[*]}"
  fi
  if ((${#backups[@]})); then
    echo "npm run destroy: the state backups left hold the secrets: ${backups[*]};" \
      "once you no longer need them (the way back from a state rm), wipe them: shred -u ${backups[*]} (or rm)"
  fi
}

# prevent_destroy_advice LOG ARGS...: where cdktf's output (LOG) holds Terraform's refusal to destroy a resource with
# lifecycle.prevent_destroy (in these stacks, the data volume's, unless deleteDataVolumeOnDestroy), our way out after
# Terraform's own, which names only disabling the setting or -target. The stack: the one cdktf names at the start of
# the block that holds the error, if it is one of cdktf.out/stacks.
prevent_destroy_advice() {
  local log=$1 stack stacks
  grep -q -e "Instance cannot be destroyed" -e "lifecycle.prevent_destroy" "$log" || return 0
  stack=$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
    awk '/^[^ \t]/ { stack = $1 } /Instance cannot be destroyed/ { print stack; exit }')
  if [[ -z "$stack" || ! -d "cdktf.out/stacks/$stack" ]]; then
    # A CLI that prefixes no line (cdktn): the destroyed stack, when there is one.
    mapfile -t stacks < <(destroyed_stacks "${@:2}")
    if ((${#stacks[@]} == 1)); then stack=${stacks[0]}; else stack="<stack>"; fi
  fi
  echo "npm run destroy: the data volume is kept (prevent_destroy): to destroy the rest and keep it," \
    "terraform -chdir=cdktf.out/stacks/$stack state rm aws_ebs_volume.crm_data, then npm run destroy again;" \
    "to delete it too (after a final snapshot), \"deleteDataVolumeOnDestroy\": true in the settings file" \
    "(docs/operations.md#destroying-and-the-data-volume)" >&2
}

main() {
  local command=$1
  shift
  if wants_help "$@"; then show_help "$command"; fi
  require_approval_means "$command" "$@"
  npm run -s check:settings
  private_output
  quiet_progress "$command" "$@"
  if [[ "$command" == synth ]]; then quiet_cli_config; fi
  if [[ "$command" == destroy ]]; then destroy_then_tidy "$@"; fi
  # shellcheck disable=SC2046 # one word or none
  CHECKPOINT_DISABLE=1 exec "$(cdk_cli)" "$command" $(lock_option "$command" "$@") "$@"
}

main "$@"
