#!/usr/bin/env bash
# Interleaved A/B timing of one command line run by two binaries (bench/interleave.sh: a warm-up,
# then A, B, B, A, A, B, ... each after a `sync`): the median wall and CPU seconds, peak RSS and page
# faults of each, and B/A as the median of the per-pair ratios. Interleaving spreads drift
# (other load, page cache, CPU frequency) over both sides alike; the median ignores outliers. Page
# faults count first writes to fresh memory, which cost what the host makes them cost: a change
# that saves faults saves more on a guest slow to map memory (the line before the table says how
# slow this one is).
# Usage: bench/ab_compare.sh [-n PAIRS] BINARY_A BINARY_B -- ARGS...
#   e.g. bench/ab_compare.sh build-old/candle-graph build/candle-graph -- import big.jsonl -o /dev/null
# BUILD (default build-bench) is where bench/host_memory_probe is looked for; PREP (shell text) runs
# untimed before every run, e.g. PREP='rm -f out.sqlite' for a command that refuses to replace.
set -euo pipefail
source "$(dirname "$0")/interleave.sh"
PAIRS=5
if [ "${1:-}" = "-n" ]; then PAIRS=$2; shift 2; fi
A=$1 B=$2; shift 2
[ "${1:-}" = "--" ] && shift
BUILD=${BUILD:-build-bench}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
args=$(printf "'%s' " "$@")
bench_check_quiet
bench_row a "${PREP:-:}" "'$A' $args"
bench_row b "${PREP:-:}" "'$B' $args"
bench_rounds "$PAIRS" "$TMP"
for i in 0 1; do
  awk -v side="${BENCH_NAMES[$i]}" -v w="$(bench_median "$i" wall)" -v c="$(bench_median "$i" cpu)" \
    -v r="$(bench_median "$i" rss)" -v f="$(bench_median "$i" faults)" 'BEGIN {
      printf "%s wall_s=%.3f cpu_s=%.2f rss_mib=%.1f faults=%d\n", side, w, c, r / 1024, f }'
done
# The middle half of the pairs' ratios says how far to trust the median: a change whose B/A lies
# inside the spread of an A/A (the same binary on both sides) on this host is not measured yet.
read -r q1 q3 < <(bench_ratios 0 1 wall | bench_quartiles_of)
awk -v r="$(bench_ratio 1 0 wall)" -v l="$(bench_load)" -v q1="$q1" -v q3="$q3" \
  'BEGIN { printf "B/A wall = %.3f (median of %s pairs, middle half %.3f-%.3f; load average after: %s)\n", 1 / r, '"$PAIRS"', q1, q3, l }'
