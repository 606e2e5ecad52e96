#!/usr/bin/env bash
# `candle-graph ranks` at scale: RANKS generated Kineto traces of SIZE bytes each, read one by one
# (-j 1) and in parallel (-j CORES), interleaved pairs, median. Target (docs/performance.md): the
# parallel run within 1.2x the one-by-one time divided by the cores, and its peak RSS below 1.5x
# the largest single trace (each rank is reduced to its summary as soon as it is read).
# Usage: bench/ranks_bench.sh BUILD_DIR [--quick]   (--quick: 8 ranks of 20 MB, else 64 of 100 MB)
# Needs BUILD_DIR/bench/pytorch_convert_tool (-DCG_BUILD_BENCH=ON) and BUILD_DIR/candle-graph.
set -euo pipefail
BUILD=$(cd "$1" && pwd); shift
RANKS=64 SIZE=100000000
[ "${1:-}" = "--quick" ] && RANKS=8 SIZE=20000000
PAIRS=${PAIRS:-3}
CORES=$(nproc)
TOOL=$BUILD/bench/pytorch_convert_tool
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data
mkdir -p "$DATA"
load=$(cut -d' ' -f1 /proc/loadavg)
# shellcheck source=bench/interleave.sh
. "$(dirname "$0")/interleave.sh"
bench_check_quiet

# One trace, generated once; every rank is a symbolic link to it named rank-N.json (the rank comes
# from the name). The bytes are the same for every rank, so each parse costs the same and the
# page cache holds one copy: the figure is the reading and reducing, not the disk.
trace=$DATA/kineto-$SIZE.json
[ -s "$trace" ] || "$TOOL" generate "$SIZE" "$trace"
dir=$DATA/ranks-$RANKS-of-$SIZE
rm -rf "$dir"; mkdir -p "$dir"
for r in $(seq 0 $((RANKS - 1))); do ln -s "$trace" "$dir/rank-$r.json"; done
bytes=$(stat -c %s "$trace")

run() {  # jobs -> "wall_s rss_kib"
  /usr/bin/time -f "%e %M" -o "$DATA/ranks-time.txt" "$CG" ranks "$dir" -j "$1" -o /dev/null \
    2>"$DATA/ranks-err.txt" || { cat "$DATA/ranks-err.txt" >&2; exit 1; }
  cat "$DATA/ranks-time.txt"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run "$CORES" >/dev/null  # warm the page cache
: >"$DATA/ranks-one.txt"; : >"$DATA/ranks-all.txt"
for _ in $(seq "$PAIRS"); do
  run 1 >>"$DATA/ranks-one.txt"
  run "$CORES" >>"$DATA/ranks-all.txt"
done
t1=$(cut -d' ' -f1 "$DATA/ranks-one.txt" | median)
tn=$(cut -d' ' -f1 "$DATA/ranks-all.txt" | median)
rss=$(cut -d' ' -f2 "$DATA/ranks-all.txt" | median)

echo "## \`ranks\` at scale (\`bench/ranks_bench.sh\`, $PAIRS interleaved pairs, median; load average $load at the start)"
echo
echo "| ranks × bytes | \`-j 1\` s | \`-j $CORES\` s | -j $CORES ÷ (-j 1 ÷ $CORES) (target ≤ 1.2) | peak RSS (MiB) | RSS ÷ one trace (target < 1.5) |"
echo "|---|---|---|---|---|---|"
awk -v n="$RANKS" -v b="$bytes" -v t1="$t1" -v tn="$tn" -v c="$CORES" -v r="$rss" 'BEGIN {
  printf "| %d × %d | %.2f | %.2f | %.2f | %.0f | %.2f |\n", n, b, t1, tn, tn / (t1 / c), r / 1024, r * 1024 / b }'
echo
