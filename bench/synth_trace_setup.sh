# Sourced by the bench scripts that run on the ~300 MB synth trace (bench/run_benchmarks.sh makes
# the same file): BUILD_DIR [--quick | --layers N] in "$@" → BUILD, QUICK, CG, DATA, REPEAT, LAYERS
# and TRACE (written once, then reused). --quick: 6000 layers (29 MB); --layers 20000: the 98 MB
# trace; the default 60000 layers: 295 MB.
BUILD=$(cd "$1" && pwd); shift
QUICK=0
LAYERS=60000
case "${1:-}" in
  --quick) QUICK=1; LAYERS=6000 ;;
  --layers) LAYERS=${2:?--layers needs a number} ;;
  "") ;;
  *) echo "usage: $0 BUILD_DIR [--quick | --layers N]" >&2; exit 2 ;;
esac
CG=$BUILD/candle-graph
DATA=$BUILD/bench-data
mkdir -p "$DATA"
REPEAT=${REPEAT:-3}
TRACE=$DATA/synth-L$LAYERS-K4.jsonl
[ -s "$TRACE" ] || "$CG" synth --layers "$LAYERS" --ops-per-span 4 --seed 1 -o "$TRACE" >/dev/null 2>&1
