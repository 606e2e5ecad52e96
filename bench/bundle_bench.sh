#!/usr/bin/env bash
# Evidence bundles: `verify --semantic` of a bundle of the ~300 MB synth trace against
# `import` of the same trace, measured in the same run and interleaved (target: within 1.5x).
# Usage: bench/bundle_bench.sh BUILD_DIR [--quick]   (--quick: the ~30 MB trace instead)
set -euo pipefail
source "$(dirname "$0")/synth_trace_setup.sh" "$@"
BUNDLE=$DATA/bundle-L$LAYERS
rm -rf "$BUNDLE"

secs() {  # wall seconds of one run of "$@" (output discarded)
  /usr/bin/time -f "%e" "$@" 2>&1 >/dev/null | tail -1
}

t_publish=$(secs "$CG" report "$TRACE" --bundle "$BUNDLE")
best_import="" best_verify="" best_plain=""
for _ in $(seq "$REPEAT"); do  # interleaved, so both see the same machine load
  t=$(secs "$CG" import "$TRACE" -o "$DATA/bundle-bench-evidence.json")
  [ -z "$best_import" ] || awk "BEGIN{exit !($t < $best_import)}" && best_import=$t
  t=$(secs "$CG" verify "$BUNDLE" --semantic -o "$DATA/bundle-bench-semantic.json")
  [ -z "$best_verify" ] || awk "BEGIN{exit !($t < $best_verify)}" && best_verify=$t
  t=$(secs "$CG" verify "$BUNDLE" -o "$DATA/bundle-bench-verify.json")
  [ -z "$best_plain" ] || awk "BEGIN{exit !($t < $best_plain)}" && best_plain=$t
done
for f in "$DATA/bundle-bench-verify.json" "$DATA/bundle-bench-semantic.json"; do
  grep -q '"verified": true' "$f" || { echo "bundle did not verify: $f" >&2; exit 1; }
done
bytes=$(stat -c %s "$TRACE")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b <= 0) b = 0.005; printf "%.2f", a/b }'; }
echo "## Evidence bundles (\`bench/bundle_bench.sh\`, best of $REPEAT, interleaved)"
echo
echo "| input | bytes | command | seconds | vs \`import\` |"
echo "|---|---|---|---|---|"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`import\` (baseline, evidence JSON written) | $best_import | 1.00 |"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`verify --semantic\` (target ≤ 1.5) | $best_verify | $(ratio "$best_verify" "$best_import") |"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`verify\` (hashes only) | $best_plain | $(ratio "$best_plain" "$best_import") |"
echo "| synth --layers $LAYERS --ops-per-span 4 | $bytes | \`report --bundle\` (one run) | $t_publish | $(ratio "$t_publish" "$best_import") |"
echo
