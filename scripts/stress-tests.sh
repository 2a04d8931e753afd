#!/usr/bin/env bash
# The whole suite under load: runs `cargo test --workspace` RUNS times in a row (default 5)
# while a CPU hog keeps every core busy beside it (`stress-ng --cpu N` when installed, else a
# shell busy loop per core), reports each run's failing tests, and exits non-zero when any run
# failed. A test that passes only on a quiet machine fails here.
#
#   scripts/stress-tests.sh [RUNS] [-- extra cargo test arguments]
#
# Environment: HOG_WORKERS (default: the number of cores), LOG_DIR (default: a fresh temporary
# folder; each run's whole output is kept there as run-N.log), STRESS_CHECKOUT (see below).
#
# From a linked worktree (`.git` is a file) the suite cannot pass: seneschal refuses such a
# repository (rule git_pinned), and the tests that serve seneschal's own checkout say so. The
# runs then use a clone of HEAD at STRESS_CHECKOUT (default: /tmp/seneschal-stress), refreshed
# each time; a clone also keeps edits made during the runs out of them.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ -f .git ]; then
  checkout=${STRESS_CHECKOUT:-/tmp/seneschal-stress}
  head=$(git rev-parse HEAD)
  if [ ! -d "$checkout/.git" ]; then
    git clone --quiet --no-checkout "$(pwd)" "$checkout" || exit 2
  fi
  git -C "$checkout" fetch --quiet "$(pwd)" "$head" && git -C "$checkout" checkout --quiet --force "$head" || exit 2
  echo "a linked worktree: running HEAD ($head) from the clone $checkout"
  cd "$checkout"
fi

runs=${1:-5}
shift $(( $# > 0 ? 1 : 0 ))
[ "${1:-}" = "--" ] && shift
cores=$(nproc 2>/dev/null || echo 2)
workers=${HOG_WORKERS:-$cores}
logs=${LOG_DIR:-$(mktemp -d -t seneschal-stress.XXXXXX)}
mkdir -p "$logs"

# The hog, in a process group of its own so that exactly it is stopped at the end.
hog_pids=()
stop_hog() {
  for p in "${hog_pids[@]}"; do
    kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null
  done
}
trap stop_hog EXIT
trap 'exit 130' INT TERM
if command -v stress-ng >/dev/null 2>&1; then
  setsid stress-ng --cpu "$workers" --quiet >/dev/null 2>&1 &
  hog_pids+=($!)
  hog="stress-ng --cpu $workers"
else
  for _ in $(seq "$workers"); do
    setsid bash -c 'while :; do :; done' &
    hog_pids+=($!)
  done
  hog="$workers shell busy loops"
fi

# Built once before the clock starts, so that each run measures the tests, not the build.
echo "building the tests (hog: $hog; logs: $logs)"
if ! cargo test --workspace --no-run "$@" >"$logs/build.log" 2>&1; then
  tail -n 40 "$logs/build.log"
  echo "the build failed: see $logs/build.log"
  exit 2
fi

failed_runs=0
start=$(date +%s)
for i in $(seq "$runs"); do
  t0=$(date +%s)
  # Every test binary runs, so that a run reports all its failures, not the first binary's.
  cargo test --workspace --no-fail-fast "$@" >"$logs/run-$i.log" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  # libtest prints one `name ... FAILED` line per failing test.
  failures=$(grep -E '^test .* \.\.\. FAILED$' "$logs/run-$i.log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort -u)
  if [ "$rc" -eq 0 ]; then
    echo "run $i/$runs: ok (${took}s)"
  else
    failed_runs=$((failed_runs + 1))
    echo "run $i/$runs: FAILED, exit $rc (${took}s)"
    if [ -n "$failures" ]; then
      sed 's/^/  /' <<<"$failures"
    else
      echo "  no test named: see $logs/run-$i.log"
    fi
  fi
done
echo "$runs runs, $failed_runs failed, $(( $(date +%s) - start ))s; logs in $logs"
[ "$failed_runs" -eq 0 ]
