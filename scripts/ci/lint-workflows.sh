#!/usr/bin/env bash
# Lints the GitHub Actions workflows with actionlint (which also runs shellcheck on every `run:`
# block when shellcheck is on PATH).
#
# Usage: scripts/ci/lint-workflows.sh [WORKFLOW_FILE...]
#   Default: every .github/workflows/*.yml and *.yaml of the repository.
# Exit codes: 0 clean; 1 actionlint reported problems; 2 no actionlint on PATH or no workflow to lint.
#
# actionlint comes from scripts/ci/install-tools.sh (source scripts/ci/env.sh to put it on PATH).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

command -v actionlint >/dev/null 2>&1 || {
  echo "lint-workflows: actionlint is not on PATH: run scripts/ci/install-tools.sh actionlint, then source scripts/ci/env.sh" >&2
  exit 2
}

files=("$@")
if ((${#files[@]} == 0)); then
  shopt -s nullglob
  files=("$root"/.github/workflows/*.yml "$root"/.github/workflows/*.yaml)
  shopt -u nullglob
fi
((${#files[@]} > 0)) || { echo "lint-workflows: no workflow in $root/.github/workflows" >&2; exit 2; }

if command -v shellcheck >/dev/null 2>&1; then
  sc="with $(shellcheck --version | sed -n 's/^version: /shellcheck /p') on run: blocks"
else
  sc="WITHOUT shellcheck (not on PATH): run: blocks are not checked"
fi
echo "lint-workflows: actionlint $(actionlint -version | sed -n 1p) $sc"

rc=0
# actionlint looks for the repository's .github directory from the working directory.
(cd "$root" && actionlint -no-color "${files[@]}") || rc=$?
if ((rc == 0)); then
  echo "lint-workflows: OK (${#files[@]} file(s): ${files[*]#"$root"/})"
  exit 0
fi
echo "lint-workflows: FAILED (actionlint exit $rc)" >&2
((rc == 1)) && exit 1
exit 2
