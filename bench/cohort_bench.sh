#!/usr/bin/env bash
# Cohort comparison speed: `compare --baseline` 10 runs `--candidate` 10 runs of
# a ~30 MB trace against one `summary` of one such trace, in the same run (target: within 12x).
# Also the peak RSS of a 2 x 5 and a 2 x 10 compare: each run is reduced to its aggregates as it
# is read, so memory must not grow with the number of runs.
# Usage: bench/cohort_bench.sh BUILD_DIR   (prints a Markdown section; REPEAT=N for best of N)
set -euo pipefail
BUILD=$(cd "$1" && pwd)
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data/cohort
mkdir -p "$DATA"
REPEAT=${REPEAT:-3}

# Run i of a cohort: the same workload (--seed 1), its own noise and run id; candidates 5 % slower.
run_file() {  # side index -> path (generated once, deterministic)
  local f=$DATA/$1-$2.jsonl scale=1.0
  [ "$1" = cand ] && scale=1.05
  [ -s "$f" ] || "$CG" synth --layers 6000 --ops-per-span 4 --seed 1 --jitter 2 \
    --time-scale "$scale" --noise-seed "$([ "$1" = cand ] && echo 100)$2" --run-id "$1-$2" \
    -o "$f" >/dev/null 2>&1
  echo "$f"
}

# command... -> "seconds cpu_seconds rss_kib" of the fastest of $REPEAT runs (cpu = user + sys:
# on a shared machine it moves less than the wall time)
best_of() {
  local best="" cpu="" rss=""
  for _ in $(seq "$REPEAT"); do
    local out t c m
    out=$( { /usr/bin/time -f "TIME %e %U %S %M" "$@" >/dev/null; } 2>&1 | grep '^TIME' )
    read -r _ t u s m <<<"$out"
    c=$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; cpu=$c; rss=$m; fi
  done
  echo "$best $cpu $rss"
}

cohort() {  # side n -> n paths
  for i in $(seq "$2"); do run_file "$1" "$i"; done
}

mapfile -t base < <(cohort base 10)
mapfile -t cand < <(cohort cand 10)
bytes=$(stat -c %s "${base[0]}")
read -r t_sum c_sum r_sum < <(best_of "$CG" summary "${base[0]}" -o "$DATA/summary.json")
read -r t_c5 c_c5 r_c5 < <(best_of "$CG" compare --baseline "${base[@]:0:5}" --candidate "${cand[@]:0:5}" -o "$DATA/cohort5.json")
read -r t_c10 c_c10 r_c10 < <(best_of "$CG" compare --baseline "${base[@]}" --candidate "${cand[@]}" -o "$DATA/cohort10.json")
verdict=$(jq -r '.verdict + " (" + (.measured_total.interval_percent.low * 100 | round / 100 | tostring) + " … " + (.measured_total.interval_percent.high * 100 | round / 100 | tostring) + " %)"' "$DATA/cohort10.json" 2>/dev/null || echo "?")

mib() { awk -v r="$1" 'BEGIN{printf "%.0f", r/1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b <= 0) b = 0.005; printf "%.1f", a/b }'; }
echo "## Cohort comparison (\`bench/cohort_bench.sh\`, best of $REPEAT)"
echo
echo "Runs: \`synth --layers 6000 --ops-per-span 4 --jitter 2\` ($bytes bytes each), candidates"
echo "\`--time-scale 1.05\`. Target: the 2 x 10 compare within 12x of one \`summary\`."
echo
echo "| command | wall s | x summary | CPU s (user+sys) | x summary | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|"
echo "| \`summary\` of one run (baseline) | $t_sum | 1.0 | $c_sum | 1.0 | $(mib "$r_sum") |"
echo "| \`compare\` 2 x 5 runs | $t_c5 | $(ratio "$t_c5" "$t_sum") | $c_c5 | $(ratio "$c_c5" "$c_sum") | $(mib "$r_c5") |"
echo "| \`compare\` 2 x 10 runs | $t_c10 | $(ratio "$t_c10" "$t_sum") | $c_c10 | $(ratio "$c_c10" "$c_sum") | $(mib "$r_c10") |"
echo
echo "2 x 10 verdict: $verdict"
