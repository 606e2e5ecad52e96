# Sourced by the bench scripts that run on the ~300 MB synth trace (bench/run_benchmarks.sh makes
# the same file): BUILD_DIR [--quick] in "$@" → BUILD, QUICK, CG, DATA, REPEAT, LAYERS and TRACE
# (written once, then reused).
BUILD=$(cd "$1" && pwd); shift
QUICK=0; [ "${1:-}" = "--quick" ] && QUICK=1
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data
mkdir -p "$DATA"
REPEAT=${REPEAT:-3}
LAYERS=60000; [ $QUICK = 1 ] && LAYERS=6000
TRACE=$DATA/synth-L$LAYERS-K4.jsonl
[ -s "$TRACE" ] || "$CG" synth --layers "$LAYERS" --ops-per-span 4 --seed 1 -o "$TRACE" >/dev/null 2>&1
