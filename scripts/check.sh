#!/usr/bin/env bash
# The project's test command (`npm test`): type check, jest (unit, stack, engine and
# integration tests), the CDK Terrain conversion check, the VM boot test, checkov scan of the
# synthesized stack, and actionlint and zizmor on the workflows.
# Tools come from scripts/ci/install-tools.sh. Locally a missing scanner or linter is
# skipped with a notice; in CI (CI=true) it is a failure.
# The boot test runs beside jest and the CDK Terrain check: its guests leave much of the two cores
# idle (waits, and one busy vCPU), which those fill. Its output follows theirs. Each layer prints
# its time ("== <layer>: N s"), and the run its total; docs/testing.md has the figures.
set -euo pipefail
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

started=$SECONDS
# took LAYER SINCE: prints how long LAYER took since SINCE (seconds of this run).
took() { echo "== $1: $((SECONDS - $2)) s"; }

echo "== type check (tsc --noEmit)"
npx tsc --noEmit
took "type check" "$started"

results=$(mktemp --suffix=.json)
boot_log=$(mktemp --suffix=.log)
boot_pid=''
# A run that stops early stops the boot test too (its guard then ends its VMs).
trap 'if [ -n "$boot_pid" ]; then kill -- "-$boot_pid" 2>/dev/null || true; fi; rm -f "$results" "$boot_log"' EXIT

# The boot test: the stack's user data in a Debian 12 VM (qemu). The first run builds the image
# (a few minutes; cached by a hash of its inputs), later runs only boot.
if have qemu-system-x86_64 "boot test" && have mmdebstrap "boot test"; then
  echo "== boot test (npm run test:boot): started, beside jest and the CDK Terrain check; its output follows theirs"
  boot_started=$SECONDS
  # In a process group of its own, which the trap above can end whole.
  setsid npx jest --config jest.boot.config.js --runInBand >"$boot_log" 2>&1 &
  boot_pid=$!
fi

echo "== jest"
jest_started=$SECONDS
status=0
npx jest --json --outputFile="$results" || status=$?
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions
node -e '
  const r = require(process.argv[1]);
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' "$results"
took jest "$jest_started"
[ "$status" -eq 0 ] || exit "$status"

echo "== CDK Terrain: the converted copy type-checks, synthesizes the same JSON and passes jest (scripts/cdktn/check.sh)"
cdktn_started=$SECONDS
bash scripts/cdktn/check.sh
took "CDK Terrain check" "$cdktn_started"

if [ -n "$boot_pid" ]; then
  boot_status=0
  wait "$boot_pid" || boot_status=$?
  boot_pid=''
  echo "== boot test's output"
  cat "$boot_log"
  took "boot test" "$boot_started"
  [ "$boot_status" -eq 0 ] || exit "$boot_status"
fi

if have checkov "security scan"; then
  echo "== synthesize and scan (checkov terraform_json)"
  # The app that cdktf synth runs (cdktf.json), for the example settings and examples/ (prod has a domain and alarm e-mail).
  scan_started=$SECONDS
  CRM_SETTINGS=settings/example.json,examples CHECKPOINT_DISABLE=1 node --import tsx main.ts
  bash scripts/ci/scan.sh
  took scan "$scan_started"
fi

if have actionlint "workflow lint" && have zizmor "workflow audit"; then
  echo "== workflow lint (actionlint, and zizmor's audit)"
  lint_started=$SECONDS
  bash scripts/ci/lint-workflows.sh
  took "workflow lint" "$lint_started"
fi
took "npm test" "$started"
