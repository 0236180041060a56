#!/usr/bin/env bash
# Publishes a Terraform plan in a GitHub job's summary ($GITHUB_STEP_SUMMARY): a headline, an
# optional note, and the plan folded in a "Show the plan" block. Run by the plan jobs of
# .github/workflows/terraform-plan.yml in the stack's directory after
# `terraform plan -detailed-exitcode -out=tfplan 2>&1 | tee plan-output.txt`.
#
# Usage: scripts/ci/plan-summary.sh [--title TEXT] [--note TEXT] EXIT_CODE
#   EXIT_CODE  terraform plan's: 0 no changes, 2 changes (the plan file tfplan is shown with
#              `terraform show`, where Terraform masks sensitive values), anything else failed
#              (plan-output.txt is shown)
#   --title    the headline's start (default "Terraform plan of `$STACK`")
#   --note     a paragraph under the headline
# GitHub keeps at most 1 MiB of summary per step: a plan over LIMIT bytes (default 900000) is cut,
# with a note saying so. Leaves no copy of the plan behind (plan.txt is removed).
set -euo pipefail

title="Terraform plan of \`${STACK:-?}\`" note=""
while (($# > 1)); do
  case "$1" in
    --title) title=$2; shift 2 ;;
    --note) note=$2; shift 2 ;;
    *) break ;;
  esac
done
(($# == 1)) && [[ "$1" =~ ^[0-9]+$ ]] || { sed -n '2,14p' "$0" >&2; exit 2; }
code=$1
: "${GITHUB_STEP_SUMMARY:?plan-summary: GITHUB_STEP_SUMMARY is not set (run it in a GitHub Actions job)}"
limit=${LIMIT:-900000}

trap 'rm -f plan.txt' EXIT
if [[ ("$code" == 0 || "$code" == 2) && -f tfplan ]]; then
  terraform show -no-color tfplan > plan.txt
  headline=$(grep -E -m 1 '^(Plan: |No changes\.|Changes to Outputs)' plan.txt || echo "Plan ready")
else
  cp plan-output.txt plan.txt 2>/dev/null || echo "terraform plan produced no output" > plan.txt
  headline="terraform plan failed"
fi
size=$(wc -c < plan.txt)
{
  echo "### $title: $headline"
  echo
  if [[ -n "$note" ]]; then
    echo "$note"
    echo
  fi
  echo "<details><summary>Show the plan ($size bytes)</summary>"
  echo
  echo '`````text'
  head -c "$limit" plan.txt
  echo
  echo '`````'
  if ((size > limit)); then
    echo
    echo "**Truncated:** only the first $limit of $size bytes are shown; run \`terraform plan\` locally for the rest."
  fi
  echo
  echo "</details>"
} >> "$GITHUB_STEP_SUMMARY"
echo "plan-summary: $headline ($size bytes)"
