# Sourced by the bench scripts: interleaved rounds and medians (CONTRIBUTING.md, "Benchmarks").
# Every round runs every row once (each after a `sync`), in order in even rounds and in reverse
# order in odd ones, so drift (other load, page cache, CPU frequency) and whatever a run leaves to
# the next (freed memory the host takes back, writeback) fall on all rows alike; each figure is the median over the rounds, and a
# ratio against the baseline row is the median of the per-round ratios, never a ratio of two
# separate bests.
#
#   bench_row NAME PREP CMD   a row: CMD (shell text, timed) after PREP (untimed, may be ":")
#   bench_rounds N DIR        one warm-up round (not counted), then N rounds; scratch files in DIR
#   bench_median I FIELD      median of row I (0-based, in bench_row order): wall, cpu (user + sys,
#                             seconds), rss (KiB) or faults (page faults served without the disk:
#                             first writes to fresh memory, which the load does not show and whose
#                             cost depends on the host)
#   bench_ratio I BASE FIELD  median over the rounds of FIELD(BASE) / FIELD(I): "vs ceiling"
#   bench_ratios I BASE FIELD each round's FIELD(BASE) / FIELD(I), one per line
#   bench_quartiles_of        numbers on stdin -> their first and third quartiles ("Q1 Q3")
#   bench_load                the load average (1, 5, 15 minutes), printed with every table
#   bench_check_quiet         prints the load, the fresh-memory rate and the CPUs' capacity, warns
#                             when they make the figures noise

# $EPOCHREALTIME writes the locale's decimal point; awk reads a dot.
export LC_NUMERIC=C

BENCH_NAMES=()
BENCH_PREPS=()
BENCH_CMDS=()
BENCH_DIR=""

bench_row() {
  BENCH_NAMES+=("$1")
  BENCH_PREPS+=("$2")
  BENCH_CMDS+=("$3")
}

bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

# Prints the machine's state with the figures that follow and warns on stderr when it makes them
# noise: a 1-minute load average of 1 or more; fresh memory slower than 1000 MB/s
# (bench/host_memory_probe.cpp: a guest whose host backs its memory lazily can be idle and still
# take several times as long for the ceiling, which copies the whole trace into fresh memory, so
# that a ratio against it measures the host); CPUs that together do less than nine tenths of
# what as many of the fastest one would (bench/host_cpu_probe.cpp: a guest's vCPUs need not be
# equal, and which one a single-threaded row gets then decides its figure, while no `-j` row can
# scale past their sum).
bench_check_quiet() {
  local load build=${BUILD:-} mib="?" rate="?" floor=1000 capacity="?" cpus="?"
  load=$(cut -d' ' -f1 /proc/loadavg)
  # Rows discard their output into /dev/null; a regular file there (left by a tool that renamed
  # a file over it) makes every discarded byte a write into memory.
  if [ ! -c /dev/null ]; then
    echo "warning: /dev/null is not a character device; rows that write to it measure writes to a" \
      "file (as root: rm /dev/null && mknod -m 666 /dev/null c 1 3)" >&2
  fi
  if awk -v l="$load" 'BEGIN { exit !(l >= 1) }'; then
    echo "warning: load average $load (above 1): these figures are noise; measure on an idle machine" >&2
  fi
  if [ -x "$build/bench/host_memory_probe" ] && read -r _ mib _ rate < <("$build/bench/host_memory_probe"); then
    if awk -v r="$rate" -v f="$floor" 'BEGIN { exit !(r < f) }'; then
      echo "warning: this machine maps fresh memory at $rate MB/s (below $floor): the ceiling and every" \
        "large read or write measure the host, not the code; ratios are not comparable with figures" \
        "taken on a faster host" >&2
    fi
  else
    mib="?" rate="?"
  fi
  if [ -x "$build/bench/host_cpu_probe" ] &&
    read -r _ capacity cpus < <("$build/bench/host_cpu_probe" | grep '^cpu_capacity '); then
    if awk -v c="$capacity" -v n="$cpus" 'BEGIN { exit !(c < 0.9 * n) }'; then
      echo "warning: this machine's $cpus CPUs do the work of $capacity of its fastest one: a" \
        "single-threaded figure depends on the CPU it ran on, and no -j figure can pass $capacity×" >&2
    fi
  else
    capacity="?" cpus="?"
  fi
  echo "Machine before the rounds: load average $(bench_load); fresh memory mapped at $rate MB/s" \
    "(bench/host_memory_probe, $mib MiB); $cpus CPUs worth $capacity of the fastest (bench/host_cpu_probe)."
  echo
}

# Runs row I once: appends "wall cpu rss_kib faults" to its samples (unless $2 = warm-up).
bench_run_one() {
  local i=$1 keep=$2
  eval "${BENCH_PREPS[$i]}"
  # Untimed: the page cache's dirty pages (the previous row's output) go to the disk now, so that
  # no row is throttled by, or waits behind, the writeback of another row's output.
  sync
  # The wall time from bash's microsecond clock: time's own %e has centiseconds, too coarse for
  # a ceiling of 80 ms.
  local began=$EPOCHREALTIME ended
  if ! /usr/bin/time -o "$BENCH_DIR/time.txt" -f "TIME %e %U %S %M %R" sh -c "exec ${BENCH_CMDS[$i]}" \
    >/dev/null 2>"$BENCH_DIR/stderr.txt"; then
    echo "bench: failed: ${BENCH_CMDS[$i]}" >&2
    cat "$BENCH_DIR/stderr.txt" >&2
    return 1
  fi
  ended=$EPOCHREALTIME
  [ "$keep" = keep ] || return 0
  grep '^TIME' "$BENCH_DIR/time.txt" |
    awk -v w="$began" -v e="$ended" '{ printf "%.4f %.3f %s %s\n", e - w, $3 + $4, $5, $6 }' \
      >>"$BENCH_DIR/row-$i.txt"
}

bench_rounds() {
  local rounds=$1 i r k
  BENCH_DIR=$2
  mkdir -p "$BENCH_DIR"
  for i in "${!BENCH_CMDS[@]}"; do rm -f "$BENCH_DIR/row-$i.txt"; done
  for i in "${!BENCH_CMDS[@]}"; do bench_run_one "$i" warm-up; done
  local n=${#BENCH_CMDS[@]}
  for ((r = 0; r < rounds; r++)); do
    for ((k = 0; k < n; k++)); do
      # A row that always ran right after the same other row measured 3% faster than that row
      # with both rows the same binary (25 pairs of `import`): alternate who goes first.
      if ((r % 2 == 0)); then i=$k; else i=$((n - 1 - k)); fi
      bench_run_one "$i" keep
    done
  done
}

bench_column() {  # FIELD -> awk column of a sample line
  case $1 in wall) echo 1 ;; cpu) echo 2 ;; rss) echo 3 ;; faults) echo 4 ;; *) echo "bench: no field $1" >&2; return 1 ;; esac
}

bench_median_of() {  # numbers on stdin, one per line -> their median (the lower one of two)
  sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

bench_median() {
  local c; c=$(bench_column "$2")
  awk -v c="$c" '{ print $c }' "$BENCH_DIR/row-$1.txt" | bench_median_of
}

bench_ratios() {  # I BASE FIELD -> each round's BASE / I, one per line
  local c; c=$(bench_column "$3")
  # Each round's line of BASE, then row I's (NF / 2 fields each).
  paste -d' ' "$BENCH_DIR/row-$2.txt" "$BENCH_DIR/row-$1.txt" |
    awk -v c="$c" '{ d = $(c + NF / 2); if (d <= 0) d = 0.001; print $c / d }'
}

bench_ratio() { bench_ratios "$@" | bench_median_of; }

bench_quartiles_of() {  # numbers on stdin -> "Q1 Q3" (nearest rank)
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR) { lo = int((NR + 3) / 4); hi = int((3 * NR + 3) / 4); print v[lo], v[hi] } }'
}
