#!/usr/bin/env bash
# `convert` and the direct read of a Kineto trace (`validate`, `summary --step all`): throughput
# and peak RSS on a large generated Kineto trace, against the simdjson ceiling measured in the
# same run.
# Usage: bench/pytorch_convert_bench.sh BUILD_DIR [--quick]   (--quick: 30 MB instead of 1 GB)
# Needs BUILD_DIR/bench/pytorch_convert_tool (-DCG_BUILD_BENCH=ON) and BUILD_DIR/candle-graph.
set -euo pipefail
BUILD=$(cd "$1" && pwd); shift
SIZE=1000000000; [ "${1:-}" = "--quick" ] && SIZE=30000000
TOOL=$BUILD/bench/pytorch_convert_tool
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data
ROUNDS=${ROUNDS:-3}
mkdir -p "$DATA"
f=$DATA/kineto-$SIZE.json
[ -s "$f" ] && [ -s "$f.events.jsonl" ] || "$TOOL" generate "$SIZE" "$f"
bytes=$(stat -c %s "$f")

# shellcheck source=bench/interleave.sh
. "$(dirname "$0")/interleave.sh"
bench_check_quiet
# The ceiling (bench/json_ceiling.hpp): parse_many over the same events written one per line
# (what any reader of every event must at least do); the whole-document DOM parse for reference.
# The direct read: the default region (the last step) and every step as one document.
bench_row ceiling : "'$TOOL' ceiling-events '$f.events.jsonl'"
bench_row dom : "'$TOOL' ceiling '$f'"
bench_row convert : "'$CG' convert '$f' -o '$DATA/kineto-converted.jsonl' -q"
bench_row validate : "'$CG' validate '$f'"
bench_row all : "'$CG' summary '$f' --step all"
load_before=$(bench_load)
bench_rounds "$ROUNDS" "$DATA/pytorch-convert-rounds"
"$CG" validate "$DATA/kineto-converted.jsonl" --require-trusted >/dev/null

echo "## PyTorch convert (\`bench/pytorch_convert_bench.sh\`, median of $ROUNDS interleaved rounds)"
echo
echo "Load average before: $load_before; after: $(bench_load)."
echo "\"vs ceiling\" = the median over the rounds of ceiling time / row time (wall, and CPU ="
echo "user+sys); higher is better."
echo
echo "| input | bytes | tool | seconds | CPU s | MB/s | peak RSS (MiB) | RSS / file | vs ceiling (wall) | vs ceiling (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
names=("simdjson parse_many over the events as JSONL (ceiling)" "simdjson DOM parse of the whole file"
  "\`convert\` (CLI, trace/6 written)" "\`validate\` (direct read, the last step)"
  "\`summary --step all\` (direct read, every step)")
for i in "${!names[@]}"; do
  t=$(bench_median "$i" wall); c=$(bench_median "$i" cpu); r=$(bench_median "$i" rss)
  printf '| generated Kineto trace | %s | %s | %s | %s | %.0f | %.0f | %.2f | %.0f%% | %.0f%% |\n' "$bytes" "${names[$i]}" "$t" "$c" \
    "$(awk -v b="$bytes" -v s="$t" 'BEGIN{ if (s <= 0) s = 0.005; print b/1e6/s }')" \
    "$(awk -v r="$r" 'BEGIN{print r/1024}')" "$(awk -v r="$r" -v b="$bytes" 'BEGIN{print r*1024/b}')" \
    "$(awk -v x="$(bench_ratio "$i" 0 wall)" 'BEGIN{print 100*x}')" \
    "$(awk -v x="$(bench_ratio "$i" 0 cpu)" 'BEGIN{print 100*x}')"
done
echo
