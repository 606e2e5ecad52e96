#!/usr/bin/env bash
# `export --format sqlite` against `import` of the same ~300 MB synth trace, in the same run, and
# `sql "SELECT * FROM op_stats"` end to end (from the trace and from the database). Prints one
# Markdown table (docs/performance.md, "SQL export").
# Usage: bench/sql_bench.sh BUILD_DIR [--quick]   (--quick: the ~30 MB trace instead)
# Targets: export <= 3x import's time; export's peak RSS <= 1.5x the trace size.
set -euo pipefail
source "$(dirname "$0")/synth_trace_setup.sh" "$@"
DB=$DATA/sql-bench.db

# best-of-N wall seconds and the peak RSS (KiB) of the best run: "seconds rss_kib". `prep` runs
# before each timed run (untimed): the export refuses to replace an existing database.
best_of() {
  local prep=$1; shift
  local best="" rss=""
  for _ in $(seq "$REPEAT"); do
    eval "$prep"
    local out
    /usr/bin/time -o "$DATA/sql-bench-time" -f "TIME %e %M" "$@" >/dev/null 2>&1
    out=$(grep '^TIME' "$DATA/sql-bench-time")
    local t=${out#TIME }; t=${t%% *}; local m=${out##* }
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
  done
  echo "$best $rss"
}

bytes=$(stat -L -c %s "$TRACE")
read -r t_imp r_imp < <(best_of : "$CG" import "$TRACE" -o "$DATA/sql-bench-evidence.json")
read -r t_exp r_exp < <(best_of "rm -f '$DB'" "$CG" export "$TRACE" --format sqlite -o "$DB")
[ -s "$DB" ] || "$CG" export "$TRACE" --format sqlite -o "$DB" >/dev/null 2>&1
read -r t_sqt r_sqt < <(best_of : "$CG" sql "$TRACE" "SELECT * FROM op_stats" --limit 0)
read -r t_sqd r_sqd < <(best_of : "$CG" sql "$DB" "SELECT * FROM op_stats" --limit 0)
db_bytes=$(stat -c %s "$DB")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b <= 0) b = 0.005; printf "%.2f", a/b }'; }
rss_ratio() { awk -v r="$1" -v b="$bytes" 'BEGIN{printf "%.2f", r*1024/b}'; }
mib() { awk -v r="$1" 'BEGIN{printf "%.0f", r/1024}'; }

echo "## SQL export and \`sql\` (\`bench/sql_bench.sh\`, best of $REPEAT)"
echo
echo "Trace: synth --layers $LAYERS --ops-per-span 4, $bytes bytes; database $db_bytes bytes."
echo
echo "| command | seconds | vs \`import\` | peak RSS (MiB) | RSS / trace |"
echo "|---|---|---|---|---|"
echo "| \`import\` (evidence JSON written; baseline) | $t_imp | 1.00 | $(mib "$r_imp") | $(rss_ratio "$r_imp") |"
echo "| \`export --format sqlite\` | $t_exp | $(ratio "$t_exp" "$t_imp") | $(mib "$r_exp") | $(rss_ratio "$r_exp") |"
echo "| \`sql TRACE \"SELECT * FROM op_stats\"\` (load + query) | $t_sqt | $(ratio "$t_sqt" "$t_imp") | $(mib "$r_sqt") | $(rss_ratio "$r_sqt") |"
echo "| \`sql DB \"SELECT * FROM op_stats\"\` | $t_sqd | $(ratio "$t_sqd" "$t_imp") | $(mib "$r_sqd") | $(rss_ratio "$r_sqd") |"
echo
rm -f "$DB" "$DATA/sql-bench-evidence.json" "$DATA/sql-bench-time"
