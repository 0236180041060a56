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
# Environment: STACK (the stack's name: cdktf.out/stacks/$STACK/cdk.tf.json), AWS_REGION, the
# required TF_VAR_subnet_id TF_VAR_key_pair_name TF_VAR_ssh_public_key, and the optional VPC_ID
# AVAILABILITY_ZONE SSH_INGRESS_CIDRS APP_INGRESS_CIDRS BOOTSTRAP_VERSION IMAGE_PARAMETER (each written
# to $GITHUB_ENV as TF_VAR_<lower-case name> when set: an empty TF_VAR_ would not be "unset").
# Exit codes: 0 ready to plan; 1 something is missing or refused; 2 usage.
set -euo pipefail

# The secret variables' placeholder: printable, and accepted by every check of the secrets.
# The instance ignores changes of its user data, so a plan shows the same with it as with the
# real values; such a plan is never applied (docs/github-actions.md).
PLACEHOLDER="placeholder-of-a-plan-without-secrets"

usage() { sed -n '2,18p' "$0" >&2; exit 2; }
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
# The Terraform variables the job gets from repository variables (GitHub variable:Terraform variable).
repository_variables=(SUBNET_ID:subnet_id KEY_PAIR_NAME:key_pair_name SSH_PUBLIC_KEY:ssh_public_key)
for pair in "${repository_variables[@]}"; do
  env_name=TF_VAR_${pair#*:}
  [[ -n "${!env_name:-}" ]] || missing+=("variable ${pair%%:*}")
done
# The stack's secret variables, from its own JSON: none where the secrets live elsewhere. A
# sensitive variable that a repository variable gives (ssh_public_key: sensitive only so that a
# pasted private key never shows in a plan's error) is not a secret to hold back.
given_by_variables=$(printf '%s\n' "${repository_variables[@]#*:}" | jq -R . | jq -s .)
mapfile -t secret_variables < <(jq -r --argjson vars "$given_by_variables" \
  '.variable // {} | to_entries[] | select(.value.sensitive == true and (.key | IN($vars[]) | not)) | .key' "$stack_json")
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

# Optional variables: only passed when set, so the stack's defaults apply otherwise.
# (VPC_ID and AVAILABILITY_ZONE among them: the stack takes the subnet's, and checks a given one against it.)
for name in VPC_ID AVAILABILITY_ZONE SSH_INGRESS_CIDRS APP_INGRESS_CIDRS BOOTSTRAP_VERSION IMAGE_PARAMETER; do
  if [[ -n "${!name:-}" ]]; then
    echo "TF_VAR_${name,,}=${!name}" >> "$GITHUB_ENV"
  fi
done

if ((${#secret_variables[@]} == 0)); then
  echo "check-stack: $STACK declares no secret variable: nothing secret to give"
elif [[ "$secrets" == placeholders ]]; then
  echo "::notice title=Planned without secrets::${secret_variables[*]} get a placeholder: secret values never show in a plan, and this plan is never applied"
else
  echo "check-stack: secret variables given: ${given[*]}"
fi
echo "check-stack: $STACK is ready to plan (backend s3, region $AWS_REGION)"
