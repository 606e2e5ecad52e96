#!/usr/bin/env bash
# `export --format chrome` (plain and gzip) against the simdjson ceiling (bench/json_ceiling.hpp:
# parse_many over the same file) and `validate` (the reading every export does first), on a synth
# trace, in interleaved rounds (bench/interleave.sh): every figure is a median over the rounds.
# Prints a Markdown table (docs/performance.md, "Chrome export") with the load average.
# Usage: bench/export_chrome_bench.sh BUILD_DIR [--quick | --layers N]
#   default 60000 layers (295 MB); --layers 20000: 98 MB; --quick: 6000 layers (29 MB).
#   ROUNDS=N (default 5) sets the number of interleaved rounds.
# Needs BUILD_DIR/candle-graph and BUILD_DIR/bench/trace_read_bench (-DCG_BUILD_BENCH=ON).
set -euo pipefail
source "$(dirname "$0")/synth_trace_setup.sh" "$@"
source "$(dirname "$0")/interleave.sh"
ROUNDS=${ROUNDS:-5}
f=$TRACE
bytes=$(stat -c %s "$f")
out=$DATA/export-chrome-bench

bench_check_quiet
load_before=$(bench_load)
bench_row "simdjson parse_many (ceiling)" : "'$BUILD/bench/trace_read_bench' parse_many '$f'"
bench_row "\`validate\` (read + health, the floor of any export)" : \
  "'$CG' validate '$f' -o '$out.validation.json'"
bench_row "\`export --format chrome -o OUT.json\`" : "'$CG' export '$f' --format chrome -o '$out.json'"
# The same export to a path that holds no file: the row above replaces the previous round's
# output, and replacing a file costs what writing a new one does not (docs/performance.md).
bench_row "\`export --format chrome -o NEW.json\` (nothing replaced)" "rm -f '$out.new.json'" \
  "'$CG' export '$f' --format chrome -o '$out.new.json'"
bench_row "\`export --format chrome -o OUT.json.gz\` (ISA-L igzip level 1)" : \
  "'$CG' export '$f' --format chrome -o '$out.json.gz'"
bench_rounds "$ROUNDS" "$DATA/export-chrome-rounds"
load_after=$(bench_load)
sizes=("—" "—" "$(stat -c %s "$out.json")" "$(stat -c %s "$out.new.json")"
  "$(stat -c %s "$out.json.gz")")
rm -f "$out.json" "$out.new.json" "$out.json.gz" "$out.validation.json"

echo "## Chrome export (\`bench/export_chrome_bench.sh\`, median of $ROUNDS interleaved rounds)"
echo
echo "Input: synth --layers $LAYERS --ops-per-span 4, $bytes bytes. Load average (1, 5, 15 min): $load_before before, $load_after after."
echo "\"vs ceiling\" = median over the rounds of the ceiling's time / the row's time (wall: what a user waits for; CPU: user + sys)."
echo
echo "| tool | wall s | CPU s | MB/s (input, wall) | peak RSS (MiB) | RSS / input | output bytes | vs ceiling (wall) | vs ceiling (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|"
for i in "${!BENCH_NAMES[@]}"; do
  awk -v tool="${BENCH_NAMES[$i]}" -v w="$(bench_median "$i" wall)" -v c="$(bench_median "$i" cpu)" \
    -v r="$(bench_median "$i" rss)" -v b="$bytes" -v out="${sizes[$i]}" \
    -v rw="$(bench_ratio "$i" 0 wall)" -v rc="$(bench_ratio "$i" 0 cpu)" 'BEGIN {
      ww = w > 0 ? w : 0.005
      printf "| %s | %.3f | %.2f | %.0f | %.0f | %.2f | %s | %.0f%% | %.0f%% |\n", tool, w, c, b / 1e6 / ww,
        r / 1024, r * 1024 / b, out, 100 * rw, 100 * rc }'
done
echo
