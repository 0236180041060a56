# shellcheck shell=bash
# Source this file (do not run it) after scripts/ci/install-tools.sh:
#   source scripts/ci/env.sh
# It only exports variables: the tools' cache directory first on PATH, the engine for cdktf
# (TERRAFORM_BINARY_NAME), the project's Terraform CLI configuration (TF_CLI_CONFIG_FILE: the AWS provider
# from the machine's filesystem mirror, or the registry; written by install-tools.sh) and
# CHECKPOINT_DISABLE=1 (no version-check calls from Terraform or cdktf).
# The cache directory is ${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}, as in install-tools.sh.

export CRM_TOOLS_DIR="${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}"
case ":${PATH:-}:" in
  *":$CRM_TOOLS_DIR/bin:"*) ;;
  *) export PATH="$CRM_TOOLS_DIR/bin${PATH:+:$PATH}" ;;
esac
export TERRAFORM_BINARY_NAME="$CRM_TOOLS_DIR/bin/terraform"
export CHECKPOINT_DISABLE=1
if [[ -f "$CRM_TOOLS_DIR/terraform.tfrc" ]]; then export TF_CLI_CONFIG_FILE="$CRM_TOOLS_DIR/terraform.tfrc"; fi
