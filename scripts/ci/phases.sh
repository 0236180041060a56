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
# Each phase runs in a control group of its own where the machine lets this run make one (root, or a
# delegated cgroup v2 tree): the table gives its CPU time, of everything it started, also what left its
# process tree (the boot test's VMs: it kills a VM's whole group, so init reaps qemu), and the run's line the
# CPU time the whole machine was busy. Elsewhere that column is empty.
# INT or TERM stops the run: every lane's process group gets SIGTERM, then SIGKILL after
# CRM_CHECK_GRACE seconds (default 30) if any of it is still there; the run ends once the groups are
# gone (at most 5 s after the SIGKILL); the run directory goes last.

phases_now() { date +%s%3N; }

# The CPU time, in ms, the machine has been busy since it started (/proc/stat: all but idle and iowait).
phases_busy() { awk '$1 == "cpu" { printf "%d", ($2 + $3 + $4 + $7 + $8 + $9) * 1000 / '"$(getconf CLK_TCK)"' }' /proc/stat; }

# A control group for this run's phases, under the first hierarchy that counts CPU time and lets this run
# make one (cgroup v2, alone or beside v1; else v1's cpuacct); empty when none does.
phases_cgroup_make() {
  local root
  phases_cgroup=''
  for root in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/cpuacct /sys/fs/cgroup/cpu,cpuacct; do
    [[ -e $root/cgroup.controllers || -e $root/cpuacct.usage ]] || continue
    if mkdir "$root/crm-check.$$" 2>/dev/null; then phases_cgroup=$root/crm-check.$$; return 0; fi
  done
}

# The CPU time, in ms, of everything that ran in the group $1 (v1's cpuacct.usage is in ns).
phases_cgroup_cpu() {
  if [[ -r $1/cpuacct.usage ]]; then awk '{ printf "%d", $1 / 1000000 }' "$1/cpuacct.usage"
  else awk '$1 == "usage_usec" { printf "%d", $2 / 1000 }' "$1/cpu.stat"; fi
}

# The run's groups removed: a phase's goes once nothing of it runs (the kernel refuses it before).
phases_cgroup_remove() {
  [[ -n ${phases_cgroup:-} && -d $phases_cgroup ]] || return 0
  rmdir "$phases_cgroup"/*/ "$phases_cgroup" 2>/dev/null || true
}

phases_begin() {
  phases_dir=$(mktemp -d "${TMPDIR:-/tmp}/crm-check.XXXXXX")
  phases_start=$(phases_now)
  # The commit under test, as it is before any phase has written a file.
  phases_commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [[ -n "$(git status --porcelain 2>/dev/null || true)" ]]; then phases_commit+=" with changes"; fi
  phases_lanes=()
  : >"$phases_dir/results"
  phases_cgroup_make
  phases_busy_start=$(phases_busy)
  trap 'phases_stop 130' INT
  trap 'phases_stop 143' TERM
  trap 'rm -rf "$phases_dir"; phases_cgroup_remove' EXIT
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

# Runs phase_NAME into its log, with a TMPDIR (and a control group) of its own, then records and prints it.
phases_run() {
  local name=$1 log="$phases_dir/$1.log" begun ended status=0 result counts group='' cpu=''
  mkdir -p "$phases_dir/tmp/$name"
  if [[ -n $phases_cgroup ]] && mkdir "$phases_cgroup/$name" 2>/dev/null; then group=$phases_cgroup/$name; fi
  begun=$(phases_now)
  # In the background and waited for, so that `set -e` holds inside the phase (a `||` would lift it).
  (
    if [[ -n $group ]]; then echo "$BASHPID" >"$group/cgroup.procs"; fi
    export TMPDIR="$phases_dir/tmp/$name"
    "phase_$name"
  ) </dev/null >"$log" 2>&1 &
  wait "$!" || status=$?
  ended=$(phases_now)
  if [[ -n $group ]]; then
    cpu=$(phases_cgroup_cpu "$group")
    rmdir "$group" 2>/dev/null || true
  fi
  result=passed
  if ((status != 0)); then result="failed (exit $status)"; elif grep -q '^SKIPPED' "$log"; then result=skipped; fi
  counts=$(grep -E '^[a-z][a-z0-9 -]*: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$((begun - phases_start))" "$((ended - begun))" "$result" "$counts" "$cpu" >>"$phases_dir/results"
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
  local file=$1 pid wall busy failed=0 passed_sum=0 failed_sum=0 name begun took result counts cpu
  for pid in "${phases_lanes[@]}"; do wait "$pid" || true; done
  wall=$(($(phases_now) - phases_start))
  busy=$(($(phases_busy) - phases_busy_start))
  mkdir -p "$(dirname "$file")"
  {
    printf '# commit\t%s\n' "$phases_commit"
    printf '# date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf '# machine\t%s cores, %s\n' "$(nproc)" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    printf '# wall\t%s\n' "$wall"
    printf '# busy\t%s\n' "$busy"
    printf 'phase\tstart\tduration\tresult\tcounts\tcpu\n'
    sort -t $'\t' -k2,2n "$phases_dir/results"
  } >"$file"
  printf '\n== phases (%s)\n' "$file"
  printf '%-12s %9s %10s %10s  %s\n' phase start duration cpu result
  # Read with a separator that is not white space: bash merges adjacent tabs, which empty fields leave.
  while IFS=$'\x1f' read -r name begun took result counts cpu; do
    printf '%-12s %9s %10s %10s  %s\n' "$name" "+$(phases_seconds "$begun") s" "$(phases_seconds "$took") s" \
      "${cpu:+$(phases_seconds "$cpu") s}" "$result${counts:+: $counts}"
    [[ "$result" == passed || "$result" == skipped ]] || failed=1
    if [[ "$counts" =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
      passed_sum=$((passed_sum + BASH_REMATCH[1])); failed_sum=$((failed_sum + BASH_REMATCH[2]))
    fi
  done < <(sort -t $'\t' -k2,2n "$phases_dir/results" | tr '\t' '\037')
  printf '%-12s %9s %10s %10s  %s\n' all "" "$(phases_seconds "$wall") s" "$(phases_seconds "$busy") s" \
    "$( ((failed)) && echo failed || echo passed); cpu: the whole machine's, $(awk -v b="$busy" -v w="$wall" 'BEGIN { printf "%.2f", b / w }') of $(nproc) cores busy on average"
  printf 'total: %s passed, %s failed\n' "$passed_sum" "$failed_sum"
  return "$failed"
}
