#!/usr/bin/env bash
# Instructions per operation of each entity workload (callgrind), on a strata-bench or peer-bench
# release binary: one callgrind dump per timed phase of `entities` (the dumps are taken on entry
# to each phase's timing function, which is the only code collected), divided by the phase's
# operations. Setup (data generation, the history workload's untimed sets) is not counted.
#
# usage: Tools/entities-callgrind.sh [BINARY] [ENGINE]
#   BINARY  default .build-bench/release/strata-bench (build it with
#           `swift build -c release --product strata-bench --scratch-path .build-bench`)
#   ENGINE  default strata; `sqlite` with Tools/PeerBench's peer-bench
# environment: RECORDS (default 20000), OUT (default /tmp/entities-callgrind; files OUT.out*)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="${1:-$ROOT/.build-bench/release/strata-bench}"
ENGINE="${2:-strata}"
RECORDS="${RECORDS:-20000}"
OUT="${OUT:-/tmp/entities-callgrind}"
fail() { echo "entities-callgrind: $*" >&2; exit 1; }
command -v valgrind >/dev/null || fail "valgrind is required"
[ -x "$BENCH" ] || fail "no executable $BENCH (see usage in $0)"
rm -f "$OUT".out*
symbols=$(nm "$BENCH" | awk '$2 ~ /^[tT]$/ && $3 ~ /14EntityWorkloadV5timed/ { print $3 }') \
    || fail "nm could not read the symbols of $BENCH"
dumps=()
for symbol in $symbols; do
    dumps+=(--dump-before="$symbol")
done
[ ${#dumps[@]} -gt 0 ] || fail "no EntityWorkload.timed symbol in $BENCH (stripped, or renamed? the dumps are taken on entry to it)"
valgrind --tool=callgrind --callgrind-out-file="$OUT.out" --collect-atstart=no \
    --toggle-collect='$s14StrataBenchKit14EntityWorkloadV5timed*' "${dumps[@]}" \
    "$BENCH" entities --engine "$ENGINE" --entity-records "$RECORDS" > "$OUT.txt" 2>&1 \
    || fail "the run failed; see $OUT.txt"
# Dump 1 is empty (before the first phase); each later dump holds the phase before it, the
# final file the last phase. Operations per phase as in EntityWorkload.run.
history=$(( RECORDS < 10000 ? RECORDS : 10000 ))
phases=("create-durable $RECORDS" "create $RECORDS" "update 100000" "read 100000" "history $history" "resolve 10000")
# One dump per call of `timed`: any other count (a phase added or removed, `timed` inlined into
# a caller, or called from elsewhere) would put figures under the wrong phase names.
count=$(find "$(dirname "$OUT")" -maxdepth 1 -name "$(basename "$OUT").out.*" | wc -l)
[ "$count" -eq ${#phases[@]} ] || fail "$count dumps of EntityWorkload.timed, expected ${#phases[@]} (one per phase: ${phases[*]%% *}); phases changed?"
[ -f "$OUT.out" ] || fail "no final dump $OUT.out"
printf '%-16s %15s %12s\n' phase instructions per-op
for i in 0 1 2 3 4 5; do
    file="$OUT.out.$((i + 2))"
    [ $i -eq 5 ] && file="$OUT.out"
    set -- ${phases[$i]}
    total=$(awk '/^(summary|totals):/ { print $2; exit }' "$file")
    [[ "$total" =~ ^[0-9]+$ ]] || fail "$file has no totals line (a dump cut short?)"
    printf '%-16s %15s %12s\n' "$1" "$total" "$(( (total + $2 / 2) / $2 ))"
done
