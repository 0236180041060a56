# shellcheck shell=bash
# Source this file (do not run it) after scripts/ci/install-tools.sh:
#   source scripts/ci/env.sh
# It only exports variables: the tools' cache directory first on PATH, the engine for cdktf
# (TERRAFORM_BINARY_NAME) and CHECKPOINT_DISABLE=1 (no version-check calls from Terraform or cdktf).
# The cache directory is ${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}, as in install-tools.sh.

export CRM_TOOLS_DIR="${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}"
case ":${PATH:-}:" in
  *":$CRM_TOOLS_DIR/bin:"*) ;;
  *) export PATH="$CRM_TOOLS_DIR/bin${PATH:+:$PATH}" ;;
esac
export TERRAFORM_BINARY_NAME="$CRM_TOOLS_DIR/bin/terraform"
export CHECKPOINT_DISABLE=1
