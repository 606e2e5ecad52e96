#!/usr/bin/env bash
# The 2 GB Kineto case (`./run bench --large`, opt-in: it writes ~4 GB of data and takes minutes):
# `report` straight on a generated Kineto trace of 2 GB in the fixtures' shape, against simdjson's
# ceiling over the same events (parse_many over them one per line, bench/json_ceiling.hpp). Target:
# `report` ≤ 2× the ceiling's time, peak RSS ≤ 1 GiB. Prints a Markdown table; each row is the
# median of REPEAT runs, the ceiling and `report` interleaved, with the load average of each run.
# Usage: bench/large_kineto_bench.sh BUILD_DIR [BYTES]   (BYTES: 2000000000)
set -euo pipefail
BUILD=$(cd "$1" && pwd); shift
SIZE=${1:-2000000000}
TOOL=$BUILD/bench/pytorch_convert_tool
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data
REPEAT=${REPEAT:-3}
mkdir -p "$DATA"
f=$DATA/kineto-$SIZE.json
[ -s "$f" ] && [ -s "$f.events.jsonl" ] || "$TOOL" generate "$SIZE" "$f"
bytes=$(stat -c %s "$f")
load() { cut -d' ' -f1 /proc/loadavg; }
# shellcheck source=bench/interleave.sh
. "$(dirname "$0")/interleave.sh"
bench_check_quiet

# "seconds rss_kib cpu_seconds load" of one run
one() {
  /usr/bin/time -o "$DATA/time.txt" -f "TIME %e %M %U %S" "$@" >/dev/null 2>&1
  local t m u s; read -r _ t m u s < <(grep '^TIME' "$DATA/time.txt")
  echo "$t $m $(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}') $(load)"
}
median() { sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }

declare -A runs
names=(ceiling report-j1 report)
for _ in $(seq "$REPEAT"); do  # interleaved: one run of each per round
  runs[ceiling]+="$(one "$TOOL" ceiling-events "$f.events.jsonl")"$'\n'
  runs[report-j1]+="$(one "$CG" report "$f" -j 1 --json "$DATA/large.json" --markdown "$DATA/large.md")"$'\n'
  runs[report]+="$(one "$CG" report "$f" --json "$DATA/large.json" --markdown "$DATA/large.md")"$'\n'
done
col() { printf '%s' "${runs[$1]}" | awk -v c="$2" 'NF{print $c}' | median; }
t_ceil=$(col ceiling 1)

echo "## 2 GB Kineto trace: \`report\` on it directly (\`bench/large_kineto_bench.sh\`, median of $REPEAT interleaved)"
echo
echo "Target: \`report\` ≤ 2× the ceiling's time, peak RSS ≤ 1 GiB. Cores: $(nproc)."
echo
echo "| input | bytes | tool | seconds | CPU s | peak RSS (MiB) | × ceiling time | load averages of the runs |"
echo "|---|---|---|---|---|---|---|---|"
for n in "${names[@]}"; do
  label=$n
  case $n in
    ceiling) label="simdjson parse_many over the events as JSONL (ceiling)" ;;
    report-j1) label="\`report -j 1\` (one thread)" ;;
    report) label="\`report\` (default: every core)" ;;
  esac
  t=$(col "$n" 1); r=$(col "$n" 2); c=$(col "$n" 3)
  loads=$(printf '%s' "${runs[$n]}" | awk 'NF{printf "%s%s", sep, $4; sep=" "}')
  printf '| generated Kineto trace | %s | %s | %s | %s | %.0f | %.2f | %s |\n' "$bytes" "$label" "$t" "$c" \
    "$(awk -v r="$r" 'BEGIN{print r/1024}')" "$(awk -v a="$t_ceil" -v t="$t" 'BEGIN{ if (a <= 0) a = 0.005; print t/a}')" "$loads"
done
echo
