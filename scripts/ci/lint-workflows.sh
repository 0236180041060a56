#!/usr/bin/env bash
# Lints the GitHub Actions workflows with actionlint (which also runs shellcheck on every `run:`
# block when shellcheck is on PATH), then audits them with zizmor, offline, under its auditor
# persona (everything it knows, false positives included).
#
# Usage: scripts/ci/lint-workflows.sh [WORKFLOW_FILE...]
#   Default: every .github/workflows/*.yml and *.yaml of the repository.
#   CRM_ZIZMOR_EXCEPTIONS  the list of accepted zizmor findings (default: scripts/ci/zizmor-exceptions.txt).
#                          Format: `AUDIT  FILE[:JOB]  reason ...`, one per line, # comments (read by
#                          scripts/ci/exceptions.py, as scan.sh's list).
# zizmor fails the lint on any finding of medium severity or above that is not listed, and on a
# listed exception that no longer fires; its ignore comments and configuration files are not
# honoured (--no-ignores --no-config): every accepted finding is in the list, with its reason.
# Exit codes: 0 clean; 1 actionlint or zizmor reported problems; 2 a tool missing, no workflow
# to lint, or a bad exceptions file.
#
# actionlint and zizmor come from scripts/ci/install-tools.sh (source scripts/ci/env.sh to put them on PATH).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
exceptions="${CRM_ZIZMOR_EXCEPTIONS:-$here/zizmor-exceptions.txt}"

for tool in actionlint zizmor python3; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "lint-workflows: $tool is not on PATH: run scripts/ci/install-tools.sh, then source scripts/ci/env.sh" >&2
    exit 2
  }
done
[[ -f "$exceptions" ]] || { echo "lint-workflows: exceptions file $exceptions not found" >&2; exit 2; }

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
if ((rc > 1)); then
  echo "lint-workflows: actionlint failed (exit $rc)" >&2
  exit 2
fi

report=$(mktemp)
trap 'rm -f "$report"' EXIT
echo "lint-workflows: $(zizmor --version) --offline --persona auditor"
# zizmor's exit code says whether it found something; the findings are judged below.
(cd "$root" && zizmor --quiet --offline --persona auditor --no-ignores --no-config --no-progress --no-exit-codes \
  --format json "${files[@]#"$root"/}") >"$report" || { echo "lint-workflows: zizmor failed" >&2; exit 2; }

zrc=0
python3 - "$report" "$exceptions" "$root" "$here" <<'PY' || zrc=$?
import json, sys

report, exceptions_file, root = sys.argv[1], sys.argv[2], sys.argv[3]
sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, sys.argv[4])
from exceptions import ExceptionsFileError, read_exceptions
BLOCKING = {"Medium", "High"}

def setup_error(msg):
    print(f"lint-workflows: {msg}", file=sys.stderr)
    sys.exit(2)

def rel(path):
    return path[len(root) + 1:] if path.startswith(root + "/") else path

try:  # the one reader of the exceptions files, scripts/ci/exceptions.py
    exceptions = read_exceptions(exceptions_file, [
        ("AUDIT", r"[a-z0-9]+(-[a-z0-9]+)*", "a zizmor audit id (such as secrets-outside-env)"), ("FILE[:JOB]", None, None),
    ], rel(exceptions_file))
except ExceptionsFileError as e:
    setup_error(str(e))

try:
    findings = json.load(open(report, encoding="utf-8"))
except ValueError as e:
    setup_error(f"unreadable zizmor report: {e}")

def place(finding):
    """(file, job or None, line) of the finding's primary location."""
    locations = finding.get("locations") or []
    primary = next((l for l in locations if l["symbolic"].get("kind") == "Primary"), locations[0] if locations else None)
    if primary is None:
        return ("?", None, 0)
    symbolic = primary["symbolic"]
    path = rel(symbolic["key"].get("Local", {}).get("verbatim_path", "?"))
    route = [step.get("Key") for step in symbolic.get("route", {}).get("route", [])]
    job = route[1] if len(route) > 1 and route[0] == "jobs" else None
    line = primary.get("concrete", {}).get("location", {}).get("start_point", {}).get("row", -1) + 1
    return (path, job, line)

used, blocking, counts = set(), 0, {}
for f in findings:
    severity = f["determinations"]["severity"]
    counts[severity] = counts.get(severity, 0) + 1
    path, job, line = place(f)
    key = next((k for k in [(f["ident"], f"{path}:{job}"), (f["ident"], path)] if k in exceptions), None)
    text = f"{f['ident']} ({severity.lower()}): {f['desc']} -- {path}:{line}" + (f" (job {job})" if job else "")
    if key:
        used.add(key)
        print(f"  excepted {text}: {exceptions[key]}")
    elif severity in BLOCKING:
        blocking += 1
        print(f"  FAILED   {text}")
    else:
        print(f"  note     {text}")
stale = [k for k in exceptions if k not in used]
for audit, where in stale:
    print(f"  STALE    exception {audit} {where} no longer fires; remove it from {rel(exceptions_file)}")
summary = ", ".join(f"{counts.get(s, 0)} {s.lower()}" for s in ["Informational", "Low", "Medium", "High"])
print(f"zizmor summary: {len(findings)} findings ({summary}); failed={blocking} excepted={len(used)} stale={len(stale)}")
sys.exit(1 if blocking or stale else 0)
PY
if ((zrc > 1)); then exit 2; fi
if ((rc == 0 && zrc == 0)); then
  echo "lint-workflows: OK (${#files[@]} file(s): ${files[*]#"$root"/})"
  exit 0
fi
echo "lint-workflows: FAILED (actionlint exit $rc, zizmor $([[ $zrc == 0 ]] && echo clean || echo 'findings above'))" >&2
exit 1
