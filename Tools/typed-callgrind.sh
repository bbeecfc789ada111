#!/usr/bin/env bash
# Instructions per operation of Strata's typed writes (callgrind), on a strata-bench release
# binary: `typed --engine strata`, collecting only inside `StrataBookStore.persist` (a batch
# insert) and `StrataBookStore.update` (one durable-or-not update per transaction), with a dump
# before each `StrataBookStore.init` (one per phase that opens a store). Data generation and the
# read phases are not counted; the figures include the commit (and, in the durable phases, the
# system calls' user-side instructions, not the time a flush waits).
#
# usage: Tools/typed-callgrind.sh [BINARY]
#   BINARY  default .build-bench/release/strata-bench (build it with
#           `swift build -c release --product strata-bench --scratch-path .build-bench`)
# environment: RECORDS (default 20000), OUT (default /tmp/typed-callgrind; files OUT.out*)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="${1:-$ROOT/.build-bench/release/strata-bench}"
RECORDS="${RECORDS:-20000}"
OUT="${OUT:-/tmp/typed-callgrind}"
fail() { echo "typed-callgrind: $*" >&2; exit 1; }
command -v valgrind >/dev/null || fail "valgrind is required"
[ -x "$BENCH" ] || fail "no executable $BENCH (see usage in $0)"
rm -f "$OUT".out*
symbols=$(nm "$BENCH" | awk '$2 ~ /^[tT]$/ && $3 ~ /^\$s12strata_bench15StrataBookStoreC.*AadEP[0-9]+(persist|update).*KFTW$/ { print $3 }') \
    || fail "nm could not read the symbols of $BENCH"
inits=$(nm "$BENCH" | awk '$2 ~ /^[tT]$/ && $3 ~ /^\$s12strata_bench15StrataBookStoreC4path.*fc$/ { print $3 }')
toggles=()
for symbol in $symbols; do toggles+=(--toggle-collect="$symbol"); done
dumps=()
for symbol in $inits; do dumps+=(--dump-before="$symbol"); done
[ ${#toggles[@]} -gt 0 ] || fail "no StrataBookStore.persist/update symbol in $BENCH (stripped, or renamed?)"
[ ${#dumps[@]} -gt 0 ] || fail "no StrataBookStore.init symbol in $BENCH (stripped, or renamed?)"
valgrind --tool=callgrind --callgrind-out-file="$OUT.out" --collect-atstart=no \
    "${toggles[@]}" "${dumps[@]}" \
    "$BENCH" typed --engine strata --typed-records "$RECORDS" > "$OUT.txt" 2>&1 \
    || fail "the run failed; see $OUT.txt"
# The stores opened, in TypedWorkload.run's order: insert-nosync, insert (then the reads, not
# collected), update-nosync, update-durable. Dump 1 is empty (before the first open); dump k+1
# holds the phase opened k-th, the final file the last phase.
phases=("insert-nosync $RECORDS" "insert $RECORDS" "update-nosync 10000" "update-durable 2000")
count=$(find "$(dirname "$OUT")" -maxdepth 1 -name "$(basename "$OUT").out.*" | wc -l)
[ "$count" -eq ${#phases[@]} ] || fail "$count dumps before StrataBookStore.init, expected ${#phases[@]} (${phases[*]%% *}); phases changed?"
[ -f "$OUT.out" ] || fail "no final dump $OUT.out"
printf '%-16s %15s %12s\n' phase instructions per-op
for i in 0 1 2 3; do
    file="$OUT.out.$((i + 2))"
    [ $i -eq 3 ] && file="$OUT.out"
    set -- ${phases[$i]}
    total=$(awk '/^(summary|totals):/ { print $2; exit }' "$file")
    [[ "$total" =~ ^[0-9]+$ ]] || fail "$file has no totals line (a dump cut short?)"
    printf '%-16s %15s %12s\n' "$1" "$total" "$(( (total + $2 / 2) / $2 ))"
done
