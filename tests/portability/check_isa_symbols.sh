#!/usr/bin/env bash
# Fails when an object file compiled for a wider instruction set exports code that uses it.
#
# Why: a TU built with -mavx2 (or with `#pragma GCC target`) emits every inline function and
# template instantiation it uses as a weak COMDAT copy. The linker keeps one copy per symbol for
# the whole program, so if it keeps the AVX2 one, code on the portable path executes AVX2 on a
# CPU without it (SIGILL). Local symbols cannot be picked for anyone else, and the run-time
# dispatched entry points are only called after the CPU check, so only those may use the ISA.
#
# usage: check_isa_symbols.sh OBJECT ALLOWED_REGEX
#   OBJECT         the relocatable object of the ISA-specific variant
#   ALLOWED_REGEX  extended regex over demangled names of the non-local symbols allowed to use
#                  the extended ISA (the dispatched entry points)
set -euo pipefail
obj=${1:?object file}
allowed=${2:?allowed regex}
for tool in nm objdump c++filt awk; do
  command -v "$tool" >/dev/null || { echo "check_isa_symbols: $tool not found" >&2; exit 2; }
done
[[ -r $obj ]] || { echo "check_isa_symbols: cannot read $obj" >&2; exit 2; }

# Non-local code symbols: nm types T (global), W (weak), i (ifunc), u (unique global).
nonlocal=$(nm --defined-only "$obj" | awk '$2 ~ /^[TWiu]$/ { print $3 }' | sort -u)

# Instructions beyond baseline x86-64 (SSE2): every VEX/EVEX form (v* mnemonics on xmm/ymm/zmm,
# vzeroupper), BMI1/BMI2 (andn, bextr, blsi, blsmsk, blsr, bzhi, pdep, pext, mulx, rorx, sarx,
# shlx, shrx, tzcnt), LZCNT, POPCNT, PCLMULQDQ, and SSE3..SSE4.2 that -mavx2 also enables.
isa_re='^(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|pdep|pext|mulx|rorx|sarx|shlx|shrx|tzcnt|lzcnt|popcnt|pclmulqdq|pshufb|palignr|pcmpeqq|pcmpgtq|pminu[bwd]|pmaxu[bwd]|ptest|pblendvb|pinsr[bdq]|pextr[bdq]|pmovzx[a-z]+|pmovsx[a-z]+|crc32[a-z]*)$'

# Per function: does its body use one of those instructions? (`objdump -d` prints "<name>:" at
# each symbol start; the mnemonic is the second tab-separated field of an instruction line.)
offenders=$(objdump -d --no-show-raw-insn "$obj" | awk -v re="$isa_re" '
  /^[0-9a-f]+ <.*>:$/ { fn = $2; sub(/^</, "", fn); sub(/>:$/, "", fn); next }
  fn != "" && /^ +[0-9a-f]+:\t/ {
    split($0, parts, "\t"); split(parts[2], words, " ")
    m = words[1]; if (m == "rep" || m == "repz" || m == "repnz" || m == "lock" || m == "notrack" || m == "bnd") m = words[2]
    if (m ~ re && !(fn in seen)) { seen[fn] = 1; print fn }
  }' | sort -u)

bad=0
checked=0
while IFS= read -r sym; do
  [[ -z $sym ]] && continue
  grep -qxF -- "$sym" <<<"$nonlocal" || continue
  checked=$((checked + 1))
  name=$(c++filt -- "$sym")
  if grep -qE -- "$allowed" <<<"$name"; then
    echo "allowed: $name"
  else
    echo "EXPORTS EXTENDED ISA: $name  [$sym]"
    bad=$((bad + 1))
  fi
done <<<"$offenders"

total=$(grep -c . <<<"$nonlocal" || true)
echo "$obj: $total non-local functions, $checked use the extended ISA, $bad not allowed"
[[ $bad -eq 0 ]]
