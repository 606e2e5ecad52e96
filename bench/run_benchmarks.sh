#!/usr/bin/env bash
# Runs every benchmark of the project and prints Markdown tables (copied into docs/performance.md).
# Usage: bench/run_benchmarks.sh BUILD_DIR [--quick] [--large]
#   --quick: only the ~30 MB trace (skips the ~300 MB one and the slow jq/python runs on it)
#   --large: also the 2 GB Kineto case (bench/large_kineto_bench.sh; ~4 GB of data, minutes)
set -euo pipefail
BUILD=$(cd "$1" && pwd); shift
QUICK=0; LARGE=0
for arg in "$@"; do
  case $arg in
    --quick) QUICK=1 ;;
    --large) LARGE=1 ;;
    *) echo "usage: bench/run_benchmarks.sh BUILD_DIR [--quick] [--large]" >&2; exit 2 ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data
mkdir -p "$DATA"
ROUNDS=${ROUNDS:-3}
# shellcheck source=bench/interleave.sh
. "$ROOT/bench/interleave.sh"
bench_check_quiet

trace_for() {  # layers -> path (generated once, deterministic)
  local f=$DATA/synth-L$1-K4.jsonl
  [ -s "$f" ] || "$CG" synth --layers "$1" --ops-per-span 4 --seed 1 -o "$f" >/dev/null 2>&1
  echo "$f"
}

mbps() { awk -v b="$1" -v s="$2" 'BEGIN{ if (s <= 0) s = 0.005; printf "%.0f", b/1e6/s }'; }

echo "## Trace core and analysis commands, end to end (\`bench/run_benchmarks.sh\`, median of $ROUNDS interleaved rounds)"
echo
echo "Every row reads the same file; \"vs ceiling\" = the median over the rounds of simdjson"
echo "parse_many time / row time (higher is better). jq and python (10-100x slower) run one round."
echo
table=()
loads=()
# layers:ops-per-span:with_jq. 6000x4 ~ 29 MB; 60000x4 ~ 290 MB; 30303x16 ~ 1 M ops.
inputs="6000:4:1"; [ $QUICK = 1 ] || inputs="6000:4:1 60000:4:1 30303:16:0"
for spec in $inputs; do
  IFS=: read -r layers k with_jq <<<"$spec"
  f=$DATA/synth-L$layers-K$k.jsonl
  [ -s "$f" ] || "$CG" synth --layers "$layers" --ops-per-span "$k" --seed 1 -o "$f" >/dev/null 2>&1
  bytes=$(stat -c %s "$f")
  BENCH_NAMES=(); BENCH_PREPS=(); BENCH_CMDS=()
  bench_row "simdjson parse_many (ceiling)" : "'$BUILD/bench/trace_read_bench' parse_many '$f'"
  bench_row "read+validate+health (library)" : "'$BUILD/bench/trace_read_bench' read '$f'"
  bench_row "\`validate\` (CLI)" : "'$CG' validate '$f' -o '$DATA/validation.json'"
  bench_row "\`summary\` (CLI, JSON written)" : "'$CG' summary '$f' -o '$DATA/summary.json'"
  bench_row "\`import\` (CLI, evidence JSON written)" : "'$CG' import '$f' -o '$DATA/evidence.json'"
  load_before=$(bench_load)
  bench_rounds "$ROUNDS" "$DATA/core-rounds"
  rows=()
  for i in "${!BENCH_NAMES[@]}"; do
    rows+=("${BENCH_NAMES[$i]}|$(bench_median "$i" wall)|$(bench_median "$i" rss)|$(bench_ratio "$i" 0 wall)")
  done
  t_jq=""
  if [ "$with_jq" = 1 ]; then
    BENCH_NAMES=(); BENCH_PREPS=(); BENCH_CMDS=()
    bench_row "jq -c ." : "jq -c . '$f'"
    bench_row "python3 json.loads per line" : "python3 -c 'import json, sys
for line in open(sys.argv[1], \"rb\"):
    line.strip() and json.loads(line)' '$f'"
    bench_rounds 1 "$DATA/core-rounds-slow"
    t_jq=$(bench_median 0 wall)
    t_ceil=$(IFS='|' read -r _ t _ <<<"${rows[0]}"; echo "$t")
    for i in 0 1; do
      t=$(bench_median "$i" wall)
      rows+=("${BENCH_NAMES[$i]}|$t|$(bench_median "$i" rss)|$(awk -v a="$t_ceil" -v t="$t" 'BEGIN{print a/t}')")
    done
  fi
  loads+=("synth --layers $layers: load average before $load_before, after $(bench_load).")
  for row in "${rows[@]}"; do
    IFS='|' read -r tool t r x <<<"$row"
    vs_jq="—"; [ -n "$t_jq" ] && vs_jq=$(awk -v j="$t_jq" -v t="$t" 'BEGIN{ if (t <= 0) t = 0.005; printf "%.1fx", j/t}')
    table+=("$(printf '| synth --layers %s --ops-per-span %s | %s | %s | %s | %s | %.0f | %.2f | %.0f%% | %s |' "$layers" "$k" "$bytes" "$tool" "$t" \
      "$(mbps "$bytes" "$t")" "$(awk -v r="$r" 'BEGIN{print r/1024}')" \
      "$(awk -v r="$r" -v b="$bytes" 'BEGIN{print r*1024/b}')" \
      "$(awk -v x="$x" 'BEGIN{print 100*x}')" "$vs_jq")")
  done
done
printf '%s\n' "${loads[@]}"
echo
echo "| input | bytes | tool | seconds | MB/s | peak RSS (MiB) | RSS / file | vs ceiling | vs jq |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${table[@]}"
echo
# Every reading command with -j 1 and -j 2, interleaved: the speedup on two cores (its own script).
"$ROOT/bench/threads_bench.sh" "$BUILD" $([ $QUICK = 1 ] && echo --quick)
# Chrome export vs the same ceiling, on the 295 MB and the 98 MB synth traces (its own script).
"$ROOT/bench/export_chrome_bench.sh" "$BUILD" $([ $QUICK = 1 ] && echo --quick)
[ $QUICK = 1 ] || "$ROOT/bench/export_chrome_bench.sh" "$BUILD" --layers 20000  # the 98 MB row
# Further benchmark programs (Google Benchmark) added by later stages.
for b in "$BUILD"/bench/*_bench; do
  case "$(basename "$b")" in trace_read_bench | evidence_bench) continue ;; esac
  echo "## $(basename "$b")"
  echo '```'
  "$b" --benchmark_min_time=0.2 2>/dev/null | grep -v '^\*\*\*' || true
  echo '```'
done
# The analysis commands stage by stage: parse, health, memory, graph, packet, JSON.
echo "## evidence_bench stages (synth --layers 6000 --ops-per-span 4; <stage> <wall s> <cpu s>)"
echo '```'
"$BUILD/bench/evidence_bench" stages "$(trace_for 6000)"
echo '```'
"$ROOT/bench/cohort_bench.sh" "$BUILD"  # cohort compare 2 x 10 runs vs one summary
"$ROOT/bench/bundle_bench.sh" "$BUILD" $([ $QUICK = 1 ] && echo --quick)  # evidence bundles
# LibTorch capture overhead (built when libtorch-dev is installed): a plain timing
# program, one process, interleaved updates; it prints its own Markdown tables.
TORCH_BENCH=$BUILD/integrations/torch/torch_overhead_bench
if [ -x "$TORCH_BENCH" ]; then
  echo "## torch_overhead_bench (LibTorch capture vs no capture vs LibTorch's profiler)"
  "$TORCH_BENCH" 2>/dev/null  # stderr: LibTorch's glog notes about pre-capture blocks
fi
# SQL export vs import, and `sql` end to end: its own script and table.
"$ROOT/bench/sql_bench.sh" "$BUILD" $([ $QUICK = 1 ] && echo --quick)
[ $QUICK = 1 ] || "$ROOT/bench/sql_bench.sh" "$BUILD" --layers 20000  # the 98 MB row
# PyTorch convert throughput and RSS on a generated Kineto trace vs the simdjson ceiling.
"$ROOT/bench/pytorch_convert_bench.sh" "$BUILD" $([ $QUICK = 1 ] && echo --quick)
"$ROOT/bench/ranks_bench.sh" "$BUILD" $([ $QUICK = 1 ] && echo --quick)  # ranks of one run, one by one vs in parallel
if [ -d "$BUILD/python/candle_graph" ]; then echo "## python_capture_bench (candle_graph.torch native and profiler engines vs no capture vs torch.autograd.profiler)"; PYTHONPATH="$BUILD/python" /usr/bin/python3 "$ROOT/bench/python_capture_bench.py" 2>/dev/null; fi
# Opt-in: the 2 GB Kineto trace read by `report` directly.
if [ $LARGE = 1 ]; then "$ROOT/bench/large_kineto_bench.sh" "$BUILD"; fi
