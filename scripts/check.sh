#!/usr/bin/env bash
# The project's test command (`npm test`): type check, jest (unit, stack, engine and
# integration tests), the CDK Terrain conversion check, the VM boot test, checkov scan of the
# synthesized stack, and actionlint and zizmor on the workflows.
# Tools come from scripts/ci/install-tools.sh. Locally a missing scanner or linter is
# skipped with a notice; in CI (CI=true) it is a failure.
set -euo pipefail

# usage: what `npm test -- --help` prints.
usage() {
  cat <<'EOF'
usage: npm test [-- --help]
runs every test of the project, in order: the type check (tsc --noEmit); jest (unit, stack, engine and
integration tests); the CDK Terrain conversion check; the VM boot test (qemu); checkov's scan of the
synthesized stacks; actionlint and zizmor on the workflows. A missing tool is skipped with a notice
(with CI=true, a failure); npm run tools installs them. One test file: npx jest <file> (docs/testing.md).
options:
  -h, --help  this help
EOF
}

case "${1-}" in
  "") ;;
  -h | --help) usage; exit 0 ;;
  *) echo "check: unknown argument $1 (npm test takes none; one test file: npx jest <file>)" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
# shellcheck source=scripts/ci/env.sh
source scripts/ci/env.sh

have() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ -n "${CI:-}" ]; then
    echo "check: $1 is missing; CI must run scripts/ci/install-tools.sh first" >&2
    exit 1
  fi
  echo "SKIPPED $2: $1 is not installed (run scripts/ci/install-tools.sh)" >&2
  return 1
}

echo "== type check (tsc --noEmit)"
npx tsc --noEmit

echo "== jest"
results=$(mktemp --suffix=.json)
trap 'rm -f "$results"' EXIT
status=0
npx jest --json --outputFile="$results" || status=$?
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions
node -e '
  const r = require(process.argv[1]);
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' "$results"
[ "$status" -eq 0 ] || exit "$status"

echo "== CDK Terrain: the converted copy type-checks, synthesizes the same JSON and passes jest (scripts/cdktn/check.sh)"
bash scripts/cdktn/check.sh

# The boot test: the stack's user data in a Debian 12 VM (qemu). The first run builds the image
# (a few minutes; cached by a hash of its inputs), later runs only boot.
if have qemu-system-x86_64 "boot test" && have mmdebstrap "boot test"; then
  echo "== boot test (npm run test:boot)"
  npx jest --config jest.boot.config.js --runInBand
fi

if have checkov "security scan"; then
  echo "== synthesize and scan (checkov terraform_json)"
  # npm run scan: the stacks of the example settings and examples/ (prod has a domain and alarm e-mail;
  # scale-out the other topology), synthesized as cdktf synth does, into a directory of their own.
  bash scripts/ci/scan.sh --synth
fi

if have actionlint "workflow lint" && have zizmor "workflow audit"; then
  echo "== workflow lint (actionlint, and zizmor's audit)"
  bash scripts/ci/lint-workflows.sh
fi
