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
command -v valgrind >/dev/null || { echo "entities-callgrind: valgrind is required" >&2; exit 1; }
rm -f "$OUT".out*
dumps=()
for symbol in $(nm "$BENCH" | awk '$2 ~ /^[tT]$/ && $3 ~ /14EntityWorkloadV5timed/ { print $3 }'); do
    dumps+=(--dump-before="$symbol")
done
[ ${#dumps[@]} -gt 0 ] || { echo "entities-callgrind: no EntityWorkload.timed in $BENCH" >&2; exit 1; }
valgrind --tool=callgrind --callgrind-out-file="$OUT.out" --collect-atstart=no \
    --toggle-collect='$s14StrataBenchKit14EntityWorkloadV5timed*' "${dumps[@]}" \
    "$BENCH" entities --engine "$ENGINE" --entity-records "$RECORDS" > "$OUT.txt" 2>&1
# Dump 1 is empty (before the first phase); each later dump holds the phase before it, the
# final file the last phase. Operations per phase as in EntityWorkload.run.
history=$(( RECORDS < 10000 ? RECORDS : 10000 ))
phases=("create-durable $RECORDS" "create $RECORDS" "update 100000" "read 100000" "history $history" "resolve 10000")
printf '%-16s %15s %12s\n' phase instructions per-op
for i in 0 1 2 3 4 5; do
    file="$OUT.out.$((i + 2))"
    [ $i -eq 5 ] && file="$OUT.out"
    set -- ${phases[$i]}
    total=$(awk '/^(summary|totals):/ { print $2; exit }' "$file")
    printf '%-16s %15s %12s\n' "$1" "$total" "$(( (total + $2 / 2) / $2 ))"
done
