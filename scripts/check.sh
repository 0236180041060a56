#!/usr/bin/env bash
# The project's test command (`npm test`): the VM boot test, and beside it the type check, jest (unit,
# stack, engine and integration tests), the CDK Terrain conversion check, checkov's scan of the
# synthesized stacks, and actionlint and zizmor on the workflows.
# The boot test's hosts A and B are the long pole (emulated VMs, one after the other): they start first,
# at normal priority; the other phases run one after another in a second lane under `nice -n 10`, the
# boot test's other hosts (C and D) last. The niceness ranks that lane
# below the boot test's own processes (its CLI runs, ssh), not below the VMs: qemu runs in a session of
# its own (__tests__/boot/vm.ts spawns it detached), and with the kernel's autogroups
# (/proc/sys/kernel/sched_autogroup_enabled) sessions share the CPU fairly whatever their niceness, so
# the VMs get about half of it while the lane is busy (docs/testing.md, The phases of one run). Each phase's
# output is printed whole when it ends; the run ends with the table of phases (also written to
# test-results/check-run.tsv, which `npm run docs:run` pastes into the docs) and the line
# `total: N passed, N failed`. A failing phase fails the run; the others still run to their end.
# Tools come from scripts/ci/install-tools.sh. Locally a missing scanner or linter is
# skipped with a notice; in CI (CI=true) it is a failure.
set -euo pipefail

# usage: what `npm test -- --help` prints.
usage() {
  cat <<'EOF'
usage: npm test [-- --help]
runs every test of the project in two lanes: the VM boot test's hosts A and B (qemu); and beside it, under
nice, the type check (tsc --noEmit), jest (unit, stack, engine and integration tests), the CDK Terrain
conversion check, checkov's scan of the synthesized stacks, actionlint and zizmor on the workflows, and
the boot test's hosts D and C; then the table of phases and `total: N passed, N failed`. A missing tool
is skipped with a notice (with CI=true, a failure); npm run tools installs them. The quick tier: npm run
test:quick. One test file: npx jest <file> (docs/testing.md).
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
# shellcheck source=scripts/ci/phases.sh
source scripts/ci/phases.sh

REPORT=test-results/check-run.tsv

have() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ -n "${CI:-}" ]; then
    echo "check: $1 is missing; CI must run scripts/ci/install-tools.sh first" >&2
    exit 1
  fi
  echo "SKIPPED $2: $1 is not installed (run scripts/ci/install-tools.sh)" >&2
  return 1
}

# The boot test: the stack's user data in Debian 12 VMs (qemu), in two files that need nothing of each
# other: hosts A and B (first-boot.boot.ts), and the settings' variants, hosts D and C (variants.boot.ts).
# The first run builds the image (a few minutes; cached by a hash of its inputs, under a lock), later runs
# only boot. Each ends with `boot: N passed, N failed`.
boot_file() {
  have qemu-system-x86_64 "boot test" && have mmdebstrap "boot test" || return 0
  npx jest --config jest.boot.config.js --runInBand "$1"
}
phase_boot() {
  boot_file __tests__/boot/first-boot.boot.ts
}

phase_typecheck() {
  npx tsc --noEmit
}

# ESLint (the recommended rules of ESLint and typescript-eslint) and Prettier's check: npm run lint.
phase_lint() {
  npm run -s lint
}

# jest with one worker more than the cores: beside the VMs, one worker sits mostly waiting in the
# real-provider test (the provider's waiters against moto), and the others take what CPU the niced
# lane gets. Ends with `jest: N passed, N failed, N skipped`; jest's report, with each file's time, stays in
# test-results/jest.json.
phase_jest() {
  local results=$PWD/test-results/jest.json status=0
  mkdir -p test-results
  npx jest --maxWorkers="$(($(nproc) + 1))" --json --outputFile="$results" || status=$?
  # shellcheck disable=SC2016 # JavaScript template literals, not shell expansions
  node -e '
    const r = require(process.argv[1]);
    console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
  ' "$results"
  return "$status"
}

# The converted copy type-checks, synthesizes the same JSON and passes jest (scripts/cdktn/check.sh).
phase_cdktn() {
  bash scripts/cdktn/check.sh
}

# npm run scan: the stacks of the example settings and examples/ (prod has a domain and alarm e-mail;
# scale-out the other topology), synthesized as cdktf synth does, into a directory of their own.
phase_scan() {
  have checkov "security scan" || return 0
  bash scripts/ci/scan.sh --synth
}

phase_workflows() {
  have actionlint "workflow lint" && have zizmor "workflow audit" || return 0
  bash scripts/ci/lint-workflows.sh
}

# The boot test's second file, last in the second lane: once the phases before it end, host A's or host B's
# VM alone keeps about one core of two busy (docs/testing.md, Benchmarks); hosts D and C take the other.
phase_boot-variants() {
  boot_file __tests__/boot/variants.boot.ts
}

phases_begin
lane boot
lane --nice 10 typecheck lint jest cdktn scan workflows boot-variants
phases_end "$REPORT"
