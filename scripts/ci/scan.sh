#!/usr/bin/env bash
# Security scan of the synthesized stack with checkov's terraform_json framework.
#
# Usage: scripts/ci/scan.sh [--synth] [--exceptions FILE] [--allow-unused] [--raw] [PATH...]
#   (npm run scan is scripts/ci/scan.sh --synth: the stacks npm test scans)
#   --synth         synthesize the stacks of settings/example.json and examples/ (the ones npm test scans)
#                   into a temporary directory and scan those, instead of PATHs
#   PATH            a cdk.tf.json file, or a directory holding one (a stack directory such as
#                   cdktf.out/stacks/CrmHostStack). Default: every cdktf.out/stacks/*/cdk.tf.json of
#                   the repository (run `npm run synth` first).
#   --exceptions F  the list of deliberate exceptions (default: scripts/ci/checkov-exceptions.txt;
#                   also CRM_CHECKOV_EXCEPTIONS). Format: `CKV_AWS_24  reason ...`, one per line, # comments
#                   (read by scripts/ci/exceptions.py, as lint-workflows.sh's list).
#   --allow-unused  do not fail when a listed exception no longer fires (for scanning partial samples).
#   --raw           scan the file exactly as synthesized (default: a normalised copy, see below).
#
# Normalisation (default): checkov 3.2's terraform_json framework does not see what the stack does by
# default when cdktf writes it the usual way: a security group rule whose cidr_blocks is "${var.x}" is not
# evaluated, and a rule holding `"ipv6_cidr_blocks": null` (cdktf's way of leaving an attribute unset)
# passes every open-port check even with 0.0.0.0/0. So the scan runs on a copy in which null attributes are
# dropped (Terraform treats null as unset: same meaning) and every value that is exactly "${var.NAME}"
# is replaced by that variable's default, i.e. the stack as deployed with its defaults. Line numbers in
# the report refer to that copy; resource addresses are the stack's own. terraform.required_version and
# the `moved` blocks are left out of the copy: checkov's terraform_json parser stops on them ("this method
# receives only dicts"; a list of blocks), and neither has a security meaning.
#
# Exit codes:
#   0  every failed check is a listed exception, and every listed exception still fires
#   1  a failed check that is not listed, a listed exception that no longer fires, or a parsing error
#   2  usage or setup error: no checkov on PATH, nothing to scan, bad exceptions file, unreadable output
#
# checkov comes from scripts/ci/install-tools.sh (source scripts/ci/env.sh to put it on PATH).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
exceptions="${CRM_CHECKOV_EXCEPTIONS:-$here/checkov-exceptions.txt}"
allow_unused=0
raw=0
synth=0
paths=()

usage() { sed -n '2,/^set -euo pipefail/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
fail() { printf 'scan: %s\n' "$*" >&2; exit 2; }

while (($# > 0)); do
  case "$1" in
    --exceptions) (($# >= 2)) || fail "--exceptions needs a file"; exceptions="$2"; shift 2 ;;
    --exceptions=*) exceptions="${1#*=}"; shift ;;
    --allow-unused) allow_unused=1; shift ;;
    --raw) raw=1; shift ;;
    --synth) synth=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; paths+=("$@"); break ;;
    -*) usage >&2; fail "unknown option $1" ;;
    *) paths+=("$1"); shift ;;
  esac
done

# The tools that `npm run tools` installed, without the user sourcing env.sh.
# shellcheck source=scripts/ci/env.sh
source "$here/env.sh"
command -v checkov >/dev/null 2>&1 \
  || fail "checkov is not installed: run 'npm run tools' (or scripts/ci/install-tools.sh checkov) first"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to read checkov's JSON report"
[[ -f "$exceptions" ]] || fail "exceptions file $exceptions not found"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ((synth)); then
  ((${#paths[@]} == 0)) || fail "--synth scans the stacks it synthesizes: give no PATH with it"
  (cd "$root" && CRM_SETTINGS=settings/example.json,examples CDKTF_OUTDIR="$work/synth" node --import tsx main.ts) \
    || fail "synthesizing settings/example.json and examples/ failed"
  paths=("$work"/synth/stacks/*)
fi
if ((${#paths[@]} == 0)); then
  shopt -s nullglob
  paths=("$root"/cdktf.out/stacks/*/cdk.tf.json)
  shopt -u nullglob
  ((${#paths[@]} > 0)) || fail "no $root/cdktf.out/stacks/*/cdk.tf.json: run 'npm run synth' first"
fi

files=()
for p in "${paths[@]}"; do
  if [[ -d "$p" ]]; then
    [[ -f "$p/cdk.tf.json" ]] || fail "$p has no cdk.tf.json"
    files+=("$p/cdk.tf.json")
  elif [[ -f "$p" ]]; then
    files+=("$p")
  else
    fail "$p: no such file or directory"
  fi
done


# No calls home: no update check, no download of guidelines or custom policies.
export CKV_SKIP_PACKAGE_UPDATE_CHECK=true
i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  target="$f"
  if ((raw == 0)); then
    mkdir -p "$work/normalised-$i"
    target="$work/normalised-$i/cdk.tf.json"
    python3 - "$f" "$target" 2>/dev/null <<'PY' || target="$f"  # not JSON: scanned as is, reported as a parsing error below
import json, re, sys
src, dst = sys.argv[1], sys.argv[2]
doc = json.load(open(src, encoding="utf-8"))
defaults = {name: v["default"] for name, v in (doc.get("variable") or {}).items()
            if isinstance(v, dict) and "default" in v}
ref = re.compile(r"^\$\{var\.([A-Za-z_][A-Za-z0-9_-]*)\}$")
def norm(node):
    if isinstance(node, dict):
        return {k: norm(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [norm(v) for v in node]
    if isinstance(node, str):
        m = ref.match(node)
        if m and m.group(1) in defaults:
            return defaults[m.group(1)]
    return node
out = {k: (v if k in ("variable", "//") else norm(v)) for k, v in doc.items()}
# checkov 3.2's terraform_json parser takes every key of the terraform block for a block and stops on
# a string, and takes every top-level key for a map of blocks and stops on the list of moved blocks:
# required_version and moved (no security meaning) stay out of the copy.
if isinstance(out.get("terraform"), dict):
    out["terraform"].pop("required_version", None)
out.pop("moved", None)
json.dump(out, open(dst, "w", encoding="utf-8"), indent=2)
PY
  fi
  rc=0
  checkov --framework terraform_json -f "$target" --skip-download -o json >"$work/report-$i.json" 2>"$work/stderr-$i.txt" || rc=$?
  # checkov exits 1 when a check fails (judged below); anything else, or no JSON, is a crash.
  if ((rc > 1)) || [[ ! -s "$work/report-$i.json" ]]; then
    cat "$work/stderr-$i.txt" >&2
    fail "checkov failed on $f (exit $rc)"
  fi
  printf '%s\n' "$f" >"$work/file-$i.txt"
done

python3 - "$exceptions" "$allow_unused" "$work" "$i" "$root" "$raw" "$here" <<'PY'
import json, sys
from collections import Counter

exceptions_file, allow_unused, work, count, root = sys.argv[1], sys.argv[2] == "1", sys.argv[3], int(sys.argv[4]), sys.argv[5]
raw = sys.argv[6] == "1"
sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, sys.argv[7])
from exceptions import ExceptionsFileError, read_exceptions

def setup_error(msg):
    print(f"scan: {msg}", file=sys.stderr)
    sys.exit(2)

# --- the exceptions file (scripts/ci/exceptions.py) -----------------------------------------------
try:
    exceptions = read_exceptions(exceptions_file, [("CHECK_ID", r"CKV[0-9]*_[A-Z0-9]+_[0-9]+", "a checkov check id (such as CKV_AWS_24)")])
except ExceptionsFileError as e:
    setup_error(str(e))

# --- checkov's reports ---------------------------------------------------------------------------
def reports(doc):
    """checkov -o json prints one object per framework, a list when there are several."""
    for rep in doc if isinstance(doc, list) else [doc]:
        if isinstance(rep, dict):
            yield rep

passed, failed, skipped = [], [], []
parsing_errors, versions = [], set()
for k in range(1, count + 1):
    path = open(f"{work}/file-{k}.txt", encoding="utf-8").read().strip()
    try:  # checkov's terraform_json framework skips a file that is not JSON without a word
        json.load(open(path, encoding="utf-8"))
    except ValueError as e:
        parsing_errors.append((path, f"not valid JSON: {e}"))
    try:
        doc = json.load(open(f"{work}/report-{k}.json", encoding="utf-8"))
    except ValueError as e:
        setup_error(f"unreadable checkov report for {path}: {e}")
    for rep in reports(doc):
        summary = rep.get("summary", {})
        if summary.get("checkov_version"):
            versions.add(summary["checkov_version"])
        results = rep.get("results")
        if results is None:  # checkov's report when nothing at all was scanned
            continue
        for c in results.get("passed_checks", []):
            passed.append((path, c))
        for c in results.get("failed_checks", []):
            failed.append((path, c))
        for c in results.get("skipped_checks", []):
            skipped.append((path, c))
        parsing_errors += [(path, e) for e in results.get("parsing_errors", [])]

def rel(p):
    return p[len(root) + 1:] if p.startswith(root + "/") else p

def where(path, c):
    lines = c.get("file_line_range") or []
    span = f":{lines[0]}-{lines[1]}" if len(lines) == 2 else ""
    if span and not raw:
        span = f", lines {lines[0]}-{lines[1]} of the normalised copy"
    return f"{c.get('resource', '?')} ({rel(path)}{span})"

unexpected = [(p, c) for p, c in failed if c["check_id"] not in exceptions]
excepted = [(p, c) for p, c in failed if c["check_id"] in exceptions]
fired = {c["check_id"] for _, c in failed}
unused = [cid for cid in exceptions if cid not in fired]

print(f"checkov {', '.join(sorted(versions)) or '?'} (framework terraform_json"
      f"{'' if raw else ', variable defaults inlined, nulls dropped'}) on: "
      + ", ".join(rel(open(f'{work}/file-{k}.txt').read().strip()) for k in range(1, count + 1)))
ran = sorted({c["check_id"] for _, c in passed + failed + skipped})
print(f"checks run ({len(ran)}): {' '.join(ran)}")
for p, c in unexpected:
    print(f"  FAILED   {c['check_id']}: {c.get('check_name', '')} -- {where(p, c)}")
by_id = Counter(c["check_id"] for _, c in excepted)
for cid, n in sorted(by_id.items()):
    print(f"  excepted {cid} x{n}: {exceptions[cid]}")
for p, c in skipped:
    comment = c.get("check_result", {}).get("suppress_comment", "")
    print(f"  skipped  {c['check_id']} (inline suppression: {comment}) -- {where(p, c)}")
for cid in unused:
    state = "allowed" if allow_unused else "STALE"
    print(f"  {state}  exception {cid} no longer fires; remove it from {rel(exceptions_file)} ({exceptions[cid]})")
for p, e in parsing_errors:
    print(f"  PARSE ERROR {rel(p)}: {e}")

print(f"checkov summary: passed={len(passed)} failed={len(unexpected)} excepted={len(excepted)} "
      f"skipped={len(skipped)} stale-exceptions={0 if allow_unused else len(unused)} "
      f"parsing-errors={len(parsing_errors)}")
bad = unexpected or parsing_errors or (unused and not allow_unused)
if not passed and not failed:
    print("scan: checkov ran no check at all (is this a Terraform JSON file?)", file=sys.stderr)
    bad = True
print("scan: FAILED" if bad else "scan: OK")
sys.exit(1 if bad else 0)
PY
