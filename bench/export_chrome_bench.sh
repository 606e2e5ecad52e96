#!/usr/bin/env bash
# `export --format chrome` throughput and peak RSS on a ~300 MB synth trace, against the simdjson
# ceiling (bench/json_ceiling.hpp: parse_many over the same file) measured in the same run.
# Prints a Markdown table (docs/performance.md, "Chrome export").
# Usage: bench/export_chrome_bench.sh BUILD_DIR [--quick]   (--quick: the ~30 MB trace only)
# Needs BUILD_DIR/candle-graph and BUILD_DIR/bench/trace_read_bench (-DCG_BUILD_BENCH=ON).
set -euo pipefail
source "$(dirname "$0")/synth_trace_setup.sh" "$@"
layers=$LAYERS
f=$TRACE
bytes=$(stat -c %s "$f")

# Best of N by CPU time (user + system: the wall clock of this shared machine is noise):
# "cpu_seconds wall_seconds rss_kib" of the best run.
best_cpu() {
  local best="" wall="" rss=""
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -o "$DATA/time.txt" -f "TIME %e %U %S %M" "$@" >/dev/null 2>&1
    read -r _ e u s m < <(grep '^TIME' "$DATA/time.txt")
    local cpu; cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')
    if [ -z "$best" ] || awk "BEGIN{exit !($cpu < $best)}"; then best=$cpu; wall=$e; rss=$m; fi
  done
  echo "$best $wall $rss"
}

echo "## Chrome export (\`bench/export_chrome_bench.sh\`, best of $REPEAT by CPU time)"
echo
echo "Input: synth --layers $layers --ops-per-span 4, $bytes bytes. \"vs ceiling\" = CPU time of simdjson parse_many on the input / CPU time of the row."
echo
echo "| tool | CPU s | wall s | MB/s (input, CPU) | peak RSS (MiB) | RSS / input | output bytes | vs ceiling |"
echo "|---|---|---|---|---|---|---|---|"
read -r c_ceil w r < <(best_cpu "$BUILD/bench/trace_read_bench" parse_many "$f")
rows=("simdjson parse_many (ceiling)|$c_ceil|$w|$r|—")
read -r c w r < <(best_cpu "$CG" validate "$f" -o "$DATA/validation.json")
rows+=("\`validate\` (read + health, the floor of any export)|$c|$w|$r|—")
read -r c w r < <(best_cpu "$CG" export "$f" --format chrome -o "$DATA/export.json")
rows+=("\`export --format chrome -o OUT.json\`|$c|$w|$r|$(stat -c %s "$DATA/export.json")")
read -r c w r < <(best_cpu "$CG" export "$f" --format chrome -o "$DATA/export.json.gz")
rows+=("\`export --format chrome -o OUT.json.gz\` (zlib level 1)|$c|$w|$r|$(stat -c %s "$DATA/export.json.gz")")
rm -f "$DATA/export.json" "$DATA/export.json.gz"
for row in "${rows[@]}"; do
  IFS='|' read -r tool c w r out <<<"$row"
  awk -v tool="$tool" -v c="$c" -v w="$w" -v r="$r" -v b="$bytes" -v out="$out" -v ceil="$c_ceil" 'BEGIN{
    cc = c > 0 ? c : 0.005
    printf "| %s | %s | %s | %.0f | %.0f | %.2f | %s | %.0f%% |\n", tool, c, w, b / 1e6 / cc, r / 1024, r * 1024 / b, out, 100 * ceil / cc }'
done
echo
