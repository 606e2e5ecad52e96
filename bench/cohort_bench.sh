#!/usr/bin/env bash
# Cohort comparison speed: `compare --baseline` 10 runs `--candidate` 10 runs of
# a ~30 MB trace against one `summary` of one such trace, in the same run (target: within 12x).
# Also the peak RSS of a 2 x 5 and a 2 x 10 compare: each run is reduced to its aggregates as it
# is read, so memory must not grow with the number of runs.
# Usage: bench/cohort_bench.sh BUILD_DIR   (prints a Markdown section; ROUNDS=N interleaved rounds)
set -euo pipefail
BUILD=$(cd "$1" && pwd)
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data/cohort
mkdir -p "$DATA"
ROUNDS=${ROUNDS:-3}

# Run i of a cohort: the same workload (--seed 1), its own noise and run id; candidates 5 % slower.
run_file() {  # side index -> path (generated once, deterministic)
  local f=$DATA/$1-$2.jsonl scale=1.0
  [ "$1" = cand ] && scale=1.05
  [ -s "$f" ] || "$CG" synth --layers 6000 --ops-per-span 4 --seed 1 --jitter 2 \
    --time-scale "$scale" --noise-seed "$([ "$1" = cand ] && echo 100)$2" --run-id "$1-$2" \
    -o "$f" >/dev/null 2>&1
  echo "$f"
}

cohort() {  # side n -> n paths
  for i in $(seq "$2"); do run_file "$1" "$i"; done
}

mapfile -t base < <(cohort base 10)
mapfile -t cand < <(cohort cand 10)
bytes=$(stat -c %s "${base[0]}")
# shellcheck source=bench/interleave.sh
. "$(dirname "$0")/interleave.sh"
bench_check_quiet
bench_row summary : "'$CG' summary '${base[0]}' -o '$DATA/summary.json'"
bench_row c5 : "'$CG' compare --baseline ${base[*]:0:5} --candidate ${cand[*]:0:5} -o '$DATA/cohort5.json'"
bench_row c10 : "'$CG' compare --baseline ${base[*]} --candidate ${cand[*]} -o '$DATA/cohort10.json'"
load_before=$(bench_load)
bench_rounds "$ROUNDS" "$DATA/rounds"
verdict=$(jq -r '.verdict + " (" + (.measured_total.interval_percent.low * 100 | round / 100 | tostring) + " … " + (.measured_total.interval_percent.high * 100 | round / 100 | tostring) + " %)"' "$DATA/cohort10.json" 2>/dev/null || echo "?")

mib() { awk -v r="$1" 'BEGIN{printf "%.0f", r/1024}'; }
row() {  # I LABEL -> one table row: medians, and ratios to the summary as medians of per-round ratios
  printf '| %s | %s | %.1f | %s | %.1f | %s |\n' "$2" "$(bench_median "$1" wall)" \
    "$(bench_ratio 0 "$1" wall)" "$(bench_median "$1" cpu)" "$(bench_ratio 0 "$1" cpu)" \
    "$(mib "$(bench_median "$1" rss)")"
}
echo "## Cohort comparison (\`bench/cohort_bench.sh\`, median of $ROUNDS interleaved rounds)"
echo
echo "Load average before: $load_before; after: $(bench_load)."
echo "Runs: \`synth --layers 6000 --ops-per-span 4 --jitter 2\` ($bytes bytes each), candidates"
echo "\`--time-scale 1.05\`. Target: the 2 x 10 compare within 12x of one \`summary\`."
echo
echo "| command | wall s | x summary | CPU s (user+sys) | x summary | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|"
row 0 "\`summary\` of one run (baseline)"
row 1 "\`compare\` 2 x 5 runs"
row 2 "\`compare\` 2 x 10 runs"
echo
echo "2 x 10 verdict: $verdict"
