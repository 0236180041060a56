#!/bin/bash
# npm run output [-- [stack] [terraform output arguments]]: the outputs of a deployed stack, each on one line, by
# `terraform output` in cdktf.out/stacks/<stack>. Not `cdktf output`: without a terminal it wraps a long value
# (the ssh command of ProvisioningLogCommand) over several lines, and the command to copy no longer pastes.
# The stack may be left out when cdktf.out holds only one. It runs the engine cdktf runs (TERRAFORM_BINARY_NAME).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: npm run output [-- [stack] [name] [terraform output options]]
The deployed stack's outputs, one a line: terraform output in cdktf.out/stacks/<stack>.
  stack        the stack's name; may be left out when cdktf.out/stacks holds only one
  name         one output only (e.g. CrmServerSshCommand); with -raw, its value alone
  -json, -raw  as terraform output takes them
  -h, --help   this help
EOF
}

# stacks: the synthesized stacks, one name a line.
stacks() {
  local dir
  for dir in cdktf.out/stacks/*/; do [[ -d "$dir" ]] && basename "$dir"; done
  return 0
}

main() {
  local arg stack
  local -a known
  for arg in "$@"; do
    case "$arg" in -h | --help) usage && return 0 ;; esac
  done
  mapfile -t known < <(stacks)
  if ((${#known[@]} == 0)); then
    echo "npm run output: no stack in cdktf.out/stacks: nothing is deployed from here yet (npm run deploy first)" >&2
    exit 2
  fi
  if [[ $# -gt 0 && "$1" != -* && -d "cdktf.out/stacks/$1" ]]; then
    stack=$1
    shift
  elif ((${#known[@]} == 1)); then
    stack=${known[0]}
  else
    echo "npm run output: cdktf.out/stacks holds ${#known[@]} stacks; name one:" \
      "npm run output -- <stack> (${known[*]})" >&2
    exit 2
  fi
  if [[ ! -d "cdktf.out/stacks/$stack/.terraform" ]]; then
    echo "npm run output: $stack is synthesized but not deployed from here" \
      "(no cdktf.out/stacks/$stack/.terraform): npm run deploy first" >&2
    exit 2
  fi
  CHECKPOINT_DISABLE=1 exec "${TERRAFORM_BINARY_NAME:-terraform}" -chdir="cdktf.out/stacks/$stack" output "$@"
}

main "$@"
