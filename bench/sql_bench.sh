#!/usr/bin/env bash
# `export --format sqlite` against `import` of the same synth trace, and `sql "SELECT * FROM
# op_stats"` end to end (from the trace and from the database), in interleaved rounds
# (bench/interleave.sh): every figure is a median over the rounds, every ratio the median of the
# per-round ratios. Prints one Markdown table (docs/performance.md, "SQL export") with the load.
# Usage: bench/sql_bench.sh BUILD_DIR [--quick | --layers N]
#   default 60000 layers (295 MB); --layers 20000: 98 MB; --quick: 6000 layers (29 MB).
#   ROUNDS=N (default 5) sets the number of interleaved rounds.
# Targets: export <= 3x import's time; export's peak RSS <= 1.5x the trace size.
set -euo pipefail
source "$(dirname "$0")/synth_trace_setup.sh" "$@"
source "$(dirname "$0")/interleave.sh"
ROUNDS=${ROUNDS:-5}
DB=$DATA/sql-bench.db
QUERY_DB=$DATA/sql-bench-query.db
bytes=$(stat -L -c %s "$TRACE")

bench_check_quiet
load_before=$(bench_load)
rm -f "$QUERY_DB"
"$CG" export "$TRACE" --format sqlite -o "$QUERY_DB" >/dev/null 2>&1
# The export refuses to replace an existing database: the untimed PREP removes it.
bench_row "\`import\` (evidence JSON written; baseline)" : \
  "'$CG' import '$TRACE' -o '$DATA/sql-bench-evidence.json'"
bench_row "\`export --format sqlite\`" "rm -f '$DB'" "'$CG' export '$TRACE' --format sqlite -o '$DB'"
bench_row "\`sql TRACE \"SELECT * FROM op_stats\"\` (load + query)" : \
  "'$CG' sql '$TRACE' 'SELECT * FROM op_stats' --limit 0"
bench_row "\`sql DB \"SELECT * FROM op_stats\"\`" : "'$CG' sql '$QUERY_DB' 'SELECT * FROM op_stats' --limit 0"
bench_rounds "$ROUNDS" "$DATA/sql-bench-rounds"
load_after=$(bench_load)
db_bytes=$(stat -c %s "$DB")

echo "## SQL export and \`sql\` (\`bench/sql_bench.sh\`, median of $ROUNDS interleaved rounds)"
echo
echo "Trace: synth --layers $LAYERS --ops-per-span 4, $bytes bytes; database $db_bytes bytes. Load average (1, 5, 15 min): $load_before before, $load_after after."
echo "\"vs \`import\`\" = median over the rounds of the row's time / \`import\`'s time in the same round."
echo
echo "| command | wall s | CPU s | vs \`import\` (wall) | vs \`import\` (CPU) | peak RSS (MiB) | RSS / trace |"
echo "|---|---|---|---|---|---|---|"
for i in "${!BENCH_NAMES[@]}"; do
  awk -v name="${BENCH_NAMES[$i]}" -v w="$(bench_median "$i" wall)" -v c="$(bench_median "$i" cpu)" \
    -v r="$(bench_median "$i" rss)" -v b="$bytes" \
    -v rw="$(bench_ratio 0 "$i" wall)" -v rc="$(bench_ratio 0 "$i" cpu)" 'BEGIN {
      printf "| %s | %.2f | %.2f | %.2f | %.2f | %.0f | %.2f |\n", name, w, c, rw, rc, r / 1024, r * 1024 / b }'
done
echo
rm -f "$DB" "$QUERY_DB" "$DATA/sql-bench-evidence.json"
