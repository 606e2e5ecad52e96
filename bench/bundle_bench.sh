#!/usr/bin/env bash
# Evidence bundles: `verify --semantic` of a bundle of the ~300 MB synth trace against
# `import` of the same trace, measured in the same run and interleaved (target: within 1.5x).
# Usage: bench/bundle_bench.sh BUILD_DIR [--quick]   (--quick: the ~30 MB trace instead)
set -euo pipefail
source "$(dirname "$0")/synth_trace_setup.sh" "$@"
BUNDLE=$DATA/bundle-L$LAYERS
rm -rf "$BUNDLE"

# shellcheck source=bench/interleave.sh
. "$(dirname "$0")/interleave.sh"
bench_check_quiet
t_publish=$(/usr/bin/time -f "%e" "$CG" report "$TRACE" --bundle "$BUNDLE" 2>&1 >/dev/null | tail -1)
bench_row import : "'$CG' import '$TRACE' -o '$DATA/bundle-bench-evidence.json'"
bench_row semantic : "'$CG' verify '$BUNDLE' --semantic -o '$DATA/bundle-bench-semantic.json'"
bench_row verify : "'$CG' verify '$BUNDLE' -o '$DATA/bundle-bench-verify.json'"
load_before=$(bench_load)
bench_rounds "$REPEAT" "$DATA/bundle-rounds"
t_import=$(bench_median 0 wall)
t_semantic=$(bench_median 1 wall)
t_verify=$(bench_median 2 wall)
for f in "$DATA/bundle-bench-verify.json" "$DATA/bundle-bench-semantic.json"; do
  grep -q '"verified": true' "$f" || { echo "bundle did not verify: $f" >&2; exit 1; }
done
bytes=$(stat -c %s "$TRACE")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b <= 0) b = 0.005; printf "%.2f", a/b }'; }
echo "## Evidence bundles (\`bench/bundle_bench.sh\`, median of $REPEAT interleaved rounds)"
echo
echo "Load average before: $load_before; after: $(bench_load). Ratios: medians of per-round ratios."
echo
echo "| input | bytes | command | seconds | vs \`import\` |"
echo "|---|---|---|---|---|"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`import\` (baseline, evidence JSON written) | $t_import | 1.00 |"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`verify --semantic\` (target ≤ 1.5) | $t_semantic | $(awk -v x="$(bench_ratio 0 1 wall)" 'BEGIN{printf "%.2f", x}') |"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`verify\` (hashes only) | $t_verify | $(awk -v x="$(bench_ratio 0 2 wall)" 'BEGIN{printf "%.2f", x}') |"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`report --bundle\` (one run) | $t_publish | $(ratio "$t_publish" "$t_import") |"
echo
