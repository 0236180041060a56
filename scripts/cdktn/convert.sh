#!/usr/bin/env bash
# Converts a checkout of this project from cdktf (archived by HashiCorp on 2025-12-10) to its
# community fork CDK Terrain (cdktn), in place: dependencies, imports, npm scripts, the workflow
# and the documented commands. The move is names only: cdktn still reads cdktf.json and writes
# cdktf.out, so the synthesized JSON is the same except for the AWS provider's version pin.
# scripts/cdktn/check.sh proves it on a scratch copy in CI.
#
# Usage: scripts/cdktn/convert.sh [--no-install] [DIR]
#   DIR           the checkout to convert (default: the repository holding this script)
#   --no-install  edit files only; do not run `npm install` to update package-lock.json
# Needs Node.js >= 22.19 to run the cdktn CLI afterwards (cdktn-cli's engines field).
set -euo pipefail

CDKTN_VERSION=0.24.0
CDKTN_CLI_VERSION=0.24.0
CDKTN_PROVIDER_AWS_VERSION=25.7.0  # generated from hashicorp/aws 6.66.0
CONSTRUCTS_VERSION=10.6.0          # cdktn needs >= 10.6.0 < 10.8.0; the CLI pins 10.6.0 itself
NODE_ENGINE=">=22.19.0"

install=1
if [[ "${1:-}" == "--no-install" ]]; then install=0; shift; fi
dir="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$dir"
[[ -f package.json && -f cdktf.json ]] || { echo "convert: $dir is not a checkout of this project" >&2; exit 1; }
log() { printf '[cdktn-convert] %s\n' "$*" >&2; }

# 1. Dependencies, engine and npm scripts (package.json). The versions they replace are read
#    first, to rewrite them where the docs state them (empty once converted: nothing to rewrite).
old_versions=$(node -e '
  const p = require("./package.json"); const d = { ...p.dependencies, ...p.devDependencies };
  if (d.cdktf) console.log([d.cdktf, d["cdktf-cli"], d["@cdktf/provider-aws"], d.constructs].join(" "));')
read -r old_cdktf old_cli old_provider old_constructs <<<"$old_versions" || true
CDKTN_VERSION=$CDKTN_VERSION CDKTN_CLI_VERSION=$CDKTN_CLI_VERSION PROVIDER=$CDKTN_PROVIDER_AWS_VERSION \
CONSTRUCTS=$CONSTRUCTS_VERSION NODE_ENGINE=$NODE_ENGINE node -e '
  const fs = require("fs");
  const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const swap = (deps, from, to, version) => {
    if (!deps || !(from in deps)) return deps;
    return Object.fromEntries(Object.entries(deps).map(([k, v]) => (k === from ? [to, version] : [k, v])));
  };
  const e = process.env;
  for (const field of ["dependencies", "devDependencies"]) {
    p[field] = swap(p[field], "cdktf", "cdktn", e.CDKTN_VERSION);
    p[field] = swap(p[field], "cdktf-cli", "cdktn-cli", e.CDKTN_CLI_VERSION);
    p[field] = swap(p[field], "@cdktf/provider-aws", "@cdktn/provider-aws", e.PROVIDER);
    if (p[field] && "constructs" in p[field]) p[field].constructs = e.CONSTRUCTS;
  }
  p.engines = { ...p.engines, node: e.NODE_ENGINE };
  for (const [name, command] of Object.entries(p.scripts ?? {})) p.scripts[name] = command.replace(/\bcdktf (?=\w)/g, "cdktn ");
  fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");
'
log "package.json: cdktn $CDKTN_VERSION, cdktn-cli $CDKTN_CLI_VERSION, @cdktn/provider-aws $CDKTN_PROVIDER_AWS_VERSION, constructs $CONSTRUCTS_VERSION, node $NODE_ENGINE"

# Files of the checkout (tracked and new, never node_modules or build output).
files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard --deduplicate -- "$@"
  else
    local names=() pattern
    for pattern in "$@"; do names+=(${names[0]+-o} -name "$pattern"); done
    find . \( -name node_modules -o -name cdktf.out -o -name .git \) -prune -o -type f \( "${names[@]}" \) -print0 |
      sed -z 's#^\./##'

  fi
}
edit() { # edit SED_SCRIPT FILE...: rewrites only the files it changes, and names them
  local script="$1" file; shift
  for file in "$@"; do
    [[ -f "$file" ]] || continue
    if ! sed -E "$script" "$file" | cmp -s - "$file"; then
      sed -i -E "$script" "$file"
      log "edited $file"
    fi
  done
}

# The CLI's name wherever a command is written (docs, the workflow, and code such as tests that
# check the workflow's commands).
cli='s#\bnpx cdktf\b#npx cdktn#g
s#\bcdktf (synth|deploy|diff|destroy|get|output|list|watch|init|provider|plan)\b#cdktn \1#g
s#\bcdktf-cli\b#cdktn-cli#g'

# 2. Imports in the code (the provider's deep paths and the core library, import and require),
#    and the CLI's name.
mapfile -d '' code < <(files '*.ts' '*.js' | grep -zv -e '\.d\.ts$' || true)
edit 's#(["'"'"'])@cdktf/provider-aws/#\1@cdktn/provider-aws/#g; s#(["'"'"'])cdktf(["'"'"'/])#\1cdktn\2#g
'"$cli" "${code[@]}"

# 3. The workflow and the documentation: the CLI's and the provider's names, the Node.js version
#    of the workflow, and the versions the docs state.
mapfile -d '' docs < <(files '*.md' '*.yml' '*.yaml' '*.sh' | grep -zv -e '^scripts/cdktn/' || true)
renames="$cli"'
s#@cdktf/provider-aws#@cdktn/provider-aws#g
s#(node-version: *["'"'"']?)(1[0-9]|20|21)\b#\122#g
s#^( *node: \[)"20\.[0-9.]+", 22, #\1"22.19.0", #
s#Node\.js 20\.19\.0, 22, 24#Node.js 22.19.0, 24#g
s#"test and synth \(Node\.js 20\.19\.0\)", "test and synth \(Node\.js 22\)", #"test and synth (Node.js 22.19.0)", #g
s#CI tests 20\.19\.0, 22, 24#CI tests 22.19.0, 24#g'
versions=""
if [[ -n "${old_cdktf:-}" ]]; then
  versions="s#\\bcdktf $old_cdktf\\b#cdktn $CDKTN_VERSION#g
s#cdktn-cli $old_cli\\b#cdktn-cli $CDKTN_CLI_VERSION#g
s#@cdktn/provider-aws $old_provider\\b#@cdktn/provider-aws $CDKTN_PROVIDER_AWS_VERSION#g
s#hashicorp/aws 6\\.25\\.0#hashicorp/aws 6.66.0#g
s#constructs $old_constructs\\b#constructs $CONSTRUCTS_VERSION#g"
fi
edit "$renames${versions:+
$versions}" "${docs[@]}"

# 4. The lock file.
if ((install)); then
  log "npm install (updates package-lock.json)"
  npm install --no-audit --no-fund --loglevel=error >&2
fi

left=$(printf '%s\0' "${code[@]}" | xargs -0 -r grep -lE "[\"'](cdktf|@cdktf/provider-aws)[\"'/]" || true)
[[ -z "$left" ]] || { echo "convert: imports of cdktf left in: $left" >&2; exit 1; }
log "done: run 'npx cdktn synth' (Node.js $NODE_ENGINE)"
