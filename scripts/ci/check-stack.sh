#!/usr/bin/env bash
# Checks, before a GitHub job plans, the synthesized stack and the repository's settings, and
# names every missing one at once (as ::error annotations); then hands the optional variables to
# the next steps. Run by the plan jobs of .github/workflows/terraform-plan.yml from the
# repository's root, where the test job's cdktf.out/ was downloaded.
#
# Usage: scripts/ci/check-stack.sh --secrets given|placeholders [--deploy]
#   --secrets given         the stack's secret (sensitive) variables must be given as TF_VAR_<name>:
#                           a missing one is named by its GitHub secret, <NAME> in upper case
#   --secrets placeholders  a plan without secrets (pull requests, the drift check): each secret
#                           variable the stack declares gets a placeholder (written to $GITHUB_ENV)
#   --deploy                the plan is applied later: TFPLAN_PASSPHRASE (which encrypts it) must be set
#
# Environment: STACK (the stack's name: cdktf.out/stacks/$STACK/cdk.tf.json), AWS_REGION, and
# REPOSITORY_VARIABLES, the repository's variables as JSON (the workflow's toJSON(vars)): every Terraform
# variable the stack declares, but its secrets, comes from the GitHub variable of its name in upper case
# (subnet_id from SUBNET_ID, data_volume_snapshot_id from DATA_VOLUME_SNAPSHOT_ID, …), written to $GITHUB_ENV
# as TF_VAR_<name> only when set (an empty TF_VAR_ would not be "unset": the stack's default applies); one
# without a default must be set. A TF_VAR_<name> the job sets itself wins.
# Exit codes: 0 ready to plan; 1 something is missing or refused; 2 usage.
set -euo pipefail

# The secret variables' placeholder: printable, and accepted by every check of the secrets.
# The instance ignores changes of its user data, so a plan shows the same with it as with the
# real values; such a plan is never applied (docs/github-actions.md).
PLACEHOLDER="placeholder-of-a-plan-without-secrets"

usage() { sed -n '2,20p' "$0" >&2; exit 2; }
secrets="" deploy=0
while (($# > 0)); do
  case "$1" in
    --secrets) (($# >= 2)) || usage; secrets=$2; shift 2 ;;
    --deploy) deploy=1; shift ;;
    *) usage ;;
  esac
done
[[ "$secrets" == given || "$secrets" == placeholders ]] || usage
: "${GITHUB_ENV:?check-stack: GITHUB_ENV is not set (run it in a GitHub Actions job)}"

stack_json="cdktf.out/stacks/${STACK:-}/cdk.tf.json"
if [[ -z "${STACK:-}" || ! -f "$stack_json" ]]; then
  found=$(find cdktf.out/stacks -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort | paste -sd ' ' || true)
  echo "::error title=Stack not found::$stack_json does not exist (synthesized: ${found:-none}); set the CRM_STACK_NAME variable to the stackName of one of your settings files"
  exit 1
fi
# Local state lives on the runner and is lost when the job ends: every plan would create
# everything again, and a deploy would orphan the last one's resources.
backend=$(jq -r '.terraform.backend // {} | keys | join(",")' "$stack_json")
if [[ "$backend" != s3 ]]; then
  echo "::error title=Local state refused::stack $STACK keeps its state in the '${backend:-local}' backend, which a GitHub runner loses; set \"backend\": {\"type\": \"s3\", \"bucket\": …} in its settings file (docs/github-actions.md, step 2)"
  exit 1
fi

missing=()
[[ -n "${AWS_REGION:-}" ]] || missing+=("variable AWS_REGION")
repository_variables=${REPOSITORY_VARIABLES:-"{}"}
if ! jq -e 'type == "object"' <<<"$repository_variables" >/dev/null 2>&1; then
  echo "::error title=Bad workflow::REPOSITORY_VARIABLES is not a JSON object (the workflow passes toJSON(vars))"
  exit 1
fi
# Sensitive variables that a repository variable gives (ssh_public_key: sensitive only so that a pasted
# private key never shows in a plan's error) are not secrets to hold back.
public_sensitive='["ssh_public_key"]'
# The stack's variables, from its own JSON: name, required (no default), secret.
mapfile -t declared < <(jq -r --argjson public "$public_sensitive" '.variable // {} | to_entries[]
  | [.key, (.value | has("default") | not), (.value.sensitive == true and (.key | IN($public[]) | not))] | @tsv' "$stack_json")
secret_variables=() passed=()
for line in "${declared[@]}"; do
  IFS=$'\t' read -r name required secret <<<"$line"
  if [[ "$secret" == true ]]; then
    secret_variables+=("$name")
    continue
  fi
  env_name="TF_VAR_$name" github_name="${name^^}"
  [[ -z "${!env_name:-}" ]] || continue
  value=$(jq -r --arg name "$github_name" '.[$name] // "" | tostring' <<<"$repository_variables")
  if [[ -z "$value" ]]; then
    [[ "$required" != true ]] || missing+=("variable $github_name")
  elif [[ "$value" == *$'\n'* ]]; then
    missing+=("variable $github_name as one line (Terraform variable $name)")
  else
    echo "$env_name=$value" >> "$GITHUB_ENV"
    passed+=("$github_name")
  fi
done
given=()
for name in "${secret_variables[@]}"; do
  env_name="TF_VAR_$name"
  if [[ "$secrets" == placeholders ]]; then
    echo "$env_name=$PLACEHOLDER" >> "$GITHUB_ENV"
  elif [[ -n "${!env_name:-}" ]]; then
    given+=("$name")
  else
    missing+=("secret ${name^^} (Terraform variable $name)")
  fi
done
if ((deploy)) && [[ -z "${TFPLAN_PASSPHRASE:-}" ]]; then
  missing+=("secret TFPLAN_PASSPHRASE")
fi
if ((${#missing[@]} > 0)); then
  for m in "${missing[@]}"; do
    echo "::error title=Missing repository setting::${m} is not set (see docs/github-actions.md)"
  done
  exit 1
fi

echo "check-stack: Terraform variables from repository variables: ${passed[*]:-none}"
if ((${#secret_variables[@]} == 0)); then
  echo "check-stack: $STACK declares no secret variable: nothing secret to give"
elif [[ "$secrets" == placeholders ]]; then
  echo "::notice title=Planned without secrets::${secret_variables[*]} get a placeholder: secret values never show in a plan, and this plan is never applied"
else
  echo "check-stack: secret variables given: ${given[*]}"
fi
echo "check-stack: $STACK is ready to plan (backend s3, region $AWS_REGION)"
