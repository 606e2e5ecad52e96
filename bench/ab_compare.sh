#!/usr/bin/env bash
# Interleaved A/B timing of one command line run by two binaries: A, B, A, B, ... N pairs, and the
# median wall and CPU seconds and peak RSS of each. Interleaving spreads drift (other load, page
# cache, CPU frequency) over both sides alike; the median ignores outliers.
# Usage: bench/ab_compare.sh [-n PAIRS] BINARY_A BINARY_B -- ARGS...
#   e.g. bench/ab_compare.sh build-old/candle-graph build/candle-graph -- import big.jsonl -o /dev/null
set -euo pipefail
PAIRS=5
if [ "${1:-}" = "-n" ]; then PAIRS=$2; shift 2; fi
A=$1 B=$2; shift 2
[ "${1:-}" = "--" ] && shift
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$load" 'BEGIN { exit !(l >= 1) }' && echo "warning: load average $load (above 1): figures are noise" >&2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
run() {  # binary -> "wall cpu rss_kib"
  local bin=$1
  /usr/bin/time -f "%e %U %S %M" -o "$TMP/t" "$bin" "${ARGS[@]}" >/dev/null 2>"$TMP/err" || {
    echo "failed: $bin ${ARGS[*]}" >&2; cat "$TMP/err" >&2; exit 1; }
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$TMP/t"
}
ARGS=("$@")
run "$A" >/dev/null; run "$B" >/dev/null  # warm the page cache
for _ in $(seq "$PAIRS"); do run "$A" >>"$TMP/a"; run "$B" >>"$TMP/b"; done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for side in a b; do
  wall=$(cut -d' ' -f1 "$TMP/$side" | median)
  cpu=$(cut -d' ' -f2 "$TMP/$side" | median)
  rss=$(cut -d' ' -f3 "$TMP/$side" | median)
  echo "$side wall_s=$wall cpu_s=$cpu rss_mib=$((rss / 1024))"
done
awk -v a="$(cut -d' ' -f1 "$TMP/a" | median)" -v b="$(cut -d' ' -f1 "$TMP/b" | median)" \
  'BEGIN { if (a > 0) printf "B/A wall = %.3f (load average at start %s)\n", b / a, "'"$load"'" }'
