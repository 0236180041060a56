# shellcheck shell=bash
# The phase runner of scripts/check.sh (`npm test`). Source it, define one function `phase_NAME` per
# phase, then:
#   phases_begin               a private run directory (logs, each phase's TMPDIR), traps for INT and TERM
#   lane [--nice N] NAME...    starts a lane in the background, in a process group of its own: its
#                              phases one after another, N niceness above the run's (default 0)
#   phases_end FILE            waits for every lane, prints the table of phases and writes it to FILE
#                              (tab-separated; scripts/docs-run.ts pastes it into the docs); returns 1
#                              when a phase failed
# Lanes run side by side. Each phase's output goes to its own log, printed whole when the phase ends
# (never interleaved with another's); its result is its exit status ("skipped" when it printed a line
# starting with SKIPPED and exited 0); its counts are the last line of its log of the form
# `name: N passed, N failed`. The last line of the run sums them: `total: N passed, N failed`.
# INT or TERM stops the run: every lane's process group gets SIGTERM, then SIGKILL after
# CRM_CHECK_GRACE seconds (default 30) if any of it is still there; the run ends once the groups are
# gone (at most 5 s after the SIGKILL); the run directory goes last.

phases_now() { date +%s%3N; }

phases_begin() {
  phases_dir=$(mktemp -d "${TMPDIR:-/tmp}/crm-check.XXXXXX")
  phases_start=$(phases_now)
  # The commit under test, as it is before any phase has written a file.
  phases_commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [[ -n "$(git status --porcelain 2>/dev/null || true)" ]]; then phases_commit+=" with changes"; fi
  phases_lanes=()
  : >"$phases_dir/results"
  trap 'phases_stop 130' INT
  trap 'phases_stop 143' TERM
  trap 'rm -rf "$phases_dir"' EXIT
}

# Starts a lane: its own process group (set -m while it forks), so that a signal reaches all it runs.
lane() {
  local nice=0
  if [[ "${1:-}" == --nice ]]; then nice=$2; shift 2; fi
  set -m
  (
    set +m
    trap - INT TERM EXIT
    # As `nice -n N` would: N more than the run's own niceness (renice -n sets it absolutely).
    ((nice == 0)) || renice -n "$(($(ps -o ni= -p "$BASHPID") + nice))" -p "$BASHPID" >/dev/null
    for name in "$@"; do phases_run "$name"; done
  ) &
  set +m
  phases_lanes+=("$!")
}

# Runs phase_NAME into its log, with a TMPDIR of its own, then records and prints it.
phases_run() {
  local name=$1 log="$phases_dir/$1.log" begun ended status=0 result counts
  mkdir -p "$phases_dir/tmp/$name"
  begun=$(phases_now)
  # In the background and waited for, so that `set -e` holds inside the phase (a `||` would lift it).
  (export TMPDIR="$phases_dir/tmp/$name"; "phase_$name") </dev/null >"$log" 2>&1 &
  wait "$!" || status=$?
  ended=$(phases_now)
  result=passed
  if ((status != 0)); then result="failed (exit $status)"; elif grep -q '^SKIPPED' "$log"; then result=skipped; fi
  counts=$(grep -E '^[a-z][a-z0-9 -]*: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$((begun - phases_start))" "$((ended - begun))" "$result" "$counts" >>"$phases_dir/results"
  {
    flock 9
    printf '\n== %s: %s after %s s\n' "$name" "$result" "$(phases_seconds "$((ended - begun))")"
    cat "$log"
    printf '== end of %s\n' "$name"
  } 9>>"$phases_dir/print.lock"
}

phases_seconds() { printf '%d.%d' "$(($1 / 1000))" "$(($1 % 1000 / 100))"; }

# INT or TERM: every lane's group gets TERM, then KILL after the grace period; exits with `code`.
phases_stop() {
  local code=$1 pid deadline
  trap '' INT TERM
  echo "check: stopping every phase (signal)" >&2
  for pid in "${phases_lanes[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + ${CRM_CHECK_GRACE:-30}))
  for pid in "${phases_lanes[@]}"; do
    while kill -0 -- "-$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  # A killed process is gone only once the kernel has run its exit, which a loaded machine delays: the run
  # ends after its lanes do (at most 5 s more), so that nothing it started outlives it.
  deadline=$((SECONDS + 5))
  for pid in "${phases_lanes[@]}"; do
    while kill -0 -- "-$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  done
  exit "$code"
}

# Waits for the lanes, prints the table and the total, writes the table to `file`; 1 if a phase failed.
phases_end() {
  local file=$1 pid wall failed=0 passed_sum=0 failed_sum=0 name begun took result counts
  for pid in "${phases_lanes[@]}"; do wait "$pid" || true; done
  wall=$(($(phases_now) - phases_start))
  mkdir -p "$(dirname "$file")"
  {
    printf '# commit\t%s\n' "$phases_commit"
    printf '# date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf '# machine\t%s cores, %s\n' "$(nproc)" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    printf '# wall\t%s\n' "$wall"
    printf 'phase\tstart\tduration\tresult\tcounts\n'
    sort -t $'\t' -k2,2n "$phases_dir/results"
  } >"$file"
  printf '\n== phases (%s)\n' "$file"
  printf '%-12s %9s %10s  %s\n' phase start duration result
  while IFS=$'\t' read -r name begun took result counts; do
    printf '%-12s %9s %10s  %s\n' "$name" "+$(phases_seconds "$begun") s" "$(phases_seconds "$took") s" "$result${counts:+: $counts}"
    [[ "$result" == passed || "$result" == skipped ]] || failed=1
    if [[ "$counts" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
      passed_sum=$((passed_sum + BASH_REMATCH[1])); failed_sum=$((failed_sum + BASH_REMATCH[2]))
    fi
  done < <(sort -t $'\t' -k2,2n "$phases_dir/results")
  printf '%-12s %9s %10s  %s\n' all "" "$(phases_seconds "$wall") s" "$( ((failed)) && echo failed || echo passed)"
  printf 'total: %s passed, %s failed\n' "$passed_sum" "$failed_sum"
  return "$failed"
}
