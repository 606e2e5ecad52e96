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
REPEAT=${REPEAT:-3}
mkdir -p "$DATA"
f=$DATA/kineto-$SIZE.json
[ -s "$f" ] && [ -s "$f.events.jsonl" ] || "$TOOL" generate "$SIZE" "$f"
bytes=$(stat -c %s "$f")

best_of() {  # best-of-N wall seconds, the peak RSS (KiB) and CPU seconds (user+sys) of that run
  local best="" rss="" cpu=""
  for _ in $(seq "$REPEAT"); do
    local out
    /usr/bin/time -o "$DATA/time.txt" -f "TIME %e %M %U %S" "$@" >/dev/null 2>&1
    out=$(grep '^TIME' "$DATA/time.txt")
    local t m u s; read -r _ t m u s <<<"$out"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}'); fi
  done
  echo "$best $rss $cpu"
}

# The ceiling (bench/json_ceiling.hpp): parse_many over the same events written one per line
# (what any reader of every event must at least do); the whole-document DOM parse for reference.
read -r t_ceil r_ceil c_ceil < <(best_of "$TOOL" ceiling-events "$f.events.jsonl")
read -r t_dom r_dom c_dom < <(best_of "$TOOL" ceiling "$f")
read -r t_conv r_conv c_conv < <(best_of "$CG" convert "$f" -o "$DATA/kineto-converted.jsonl" -q)
# The direct read: the default region (the last step) and every step as one document.
read -r t_val r_val c_val < <(best_of "$CG" validate "$f")
read -r t_all r_all c_all < <(best_of "$CG" summary "$f" --step all)
"$CG" validate "$DATA/kineto-converted.jsonl" --require-trusted >/dev/null

echo "## PyTorch convert (\`bench/pytorch_convert_bench.sh\`, best of $REPEAT)"
echo
echo "\"vs ceiling\" = ceiling time / row time (wall, and CPU = user+sys); higher is better."
echo
echo "| input | bytes | tool | seconds | CPU s | MB/s | peak RSS (MiB) | RSS / file | vs ceiling (wall) | vs ceiling (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for row in "simdjson parse_many over the events as JSONL (ceiling)|$t_ceil|$r_ceil|$c_ceil" "simdjson DOM parse of the whole file|$t_dom|$r_dom|$c_dom" "\`convert\` (CLI, trace/6 written)|$t_conv|$r_conv|$c_conv" "\`validate\` (direct read, the last step)|$t_val|$r_val|$c_val" "\`summary --step all\` (direct read, every step)|$t_all|$r_all|$c_all"; do
  IFS='|' read -r tool t r c <<<"$row"
  printf '| generated Kineto trace | %s | %s | %s | %s | %.0f | %.0f | %.2f | %.0f%% | %.0f%% |\n' "$bytes" "$tool" "$t" "$c" \
    "$(awk -v b="$bytes" -v s="$t" 'BEGIN{ if (s <= 0) s = 0.005; print b/1e6/s }')" \
    "$(awk -v r="$r" 'BEGIN{print r/1024}')" "$(awk -v r="$r" -v b="$bytes" 'BEGIN{print r*1024/b}')" \
    "$(awk -v a="$t_ceil" -v t="$t" 'BEGIN{ if (t <= 0) t = 0.005; print 100*a/t}')" \
    "$(awk -v a="$c_ceil" -v t="$c" 'BEGIN{ if (t <= 0) t = 0.005; print 100*a/t}')"
done
echo
