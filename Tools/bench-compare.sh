#!/usr/bin/env bash
# Runs the same benchmark workloads on Strata (strata-bench), LMDB, SQLite and libmdbx (peer-bench)
# on this machine, saves every JSON result line, and prints a markdown comparison table.
# Both executables run the workload code of the StrataBenchKit library (Tools/StrataBenchKit).
#
# usage: Tools/bench-compare.sh [WORKLOAD ...] [--records N] [--batch B] [--duration S]
#                               [--sync-commits N] [--notify-commits N] [--dir DIR] ...
#   All arguments go unchanged to strata-bench and to peer-bench (do not pass --engine).
#   `entities` runs the entity-store workloads (Strata and SQLite only).
# environment:
#   RESULTS=FILE        JSON lines output (default /tmp/strata-bench-results.jsonl);
#                       the markdown table is also written next to it as FILE minus .jsonl plus .md
#   STRATA_BENCH=PATH   use this strata-bench binary instead of building it (default: built
#                       from the root package in release, in its own scratch path .build-bench
#                       so it never touches the debug .build)
#   SKIP_STRATA=1       do not build or run strata-bench (peers only)
#   MDBX_LIBRARY=PATH   libmdbx.so for the mdbx column (default: Tools/PeerBench/.mdbx/libmdbx.so,
#                       fetched by Tools/PeerBench/get-mdbx.sh from the PyPI wheel `libmdbx`
#                       when missing); without it the mdbx column is left out
#   SKIP_MDBX=1         leave libmdbx out
#   ROUNDS=N            run every engine N times, alternating (strata, lmdb, sqlite, ..., then again,
#                       each round starting one engine later),
#                       and report each engine's median and the median of the per-round ratios with
#                       their range (default 1). On a shared machine a phase of a fraction of a second
#                       run minutes after the other engine's measures the load as much as the engine;
#                       alternating puts both engines' phases of one round close together in time.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEER_DIR="$ROOT/Tools/PeerBench"
STRATA_SCRATCH="$ROOT/.build-bench"
RESULTS="${RESULTS:-/tmp/strata-bench-results.jsonl}"
ROUNDS="${ROUNDS:-1}"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { printf '%s\n' "bench-compare: ROUNDS must be a positive integer" >&2; exit 1; }
ROUND=1
TABLE="${RESULTS%.jsonl}.md"
[ "$TABLE" = "$RESULTS" ] && TABLE="$RESULTS.md"

log() { printf '%s\n' "bench-compare: $*" >&2; }

command -v python3 >/dev/null || { log "error: python3 is required for the table"; exit 1; }

# --- build -----------------------------------------------------------------
log "building peer-bench (release)"
if ! (cd "$PEER_DIR" && swift build -c release --product peer-bench >&2); then
    log "error: peer-bench failed to build (needs liblmdb-dev, libsqlite3-dev and the root package's StrataBenchKit)"
    exit 1
fi
PEER="$(cd "$PEER_DIR" && swift build -c release --show-bin-path)/peer-bench"

STRATA=""
if [ -n "${SKIP_STRATA:-}" ]; then
    log "SKIP_STRATA is set: comparing LMDB and SQLite only"
elif [ -n "${STRATA_BENCH:-}" ]; then
    STRATA="$STRATA_BENCH"
else
    log "building strata-bench (release)"
    if (cd "$ROOT" && swift build -c release --product strata-bench --scratch-path "$STRATA_SCRATCH" >&2); then
        STRATA="$(cd "$ROOT" && swift build -c release --scratch-path "$STRATA_SCRATCH" --show-bin-path)/strata-bench"
    else
        log "warning: strata-bench failed to build; comparing LMDB and SQLite only"
    fi
fi

# --- run -------------------------------------------------------------------
: > "$RESULTS"
OUT="$(mktemp /tmp/bench-compare.XXXXXX)"
trap 'rm -f "$OUT"' EXIT

run() {  # run LABEL COMMAND...: keeps the JSON lines of stdout, stderr passes through
    local label="$1"; shift
    log "running $label: $*"
    "$@" > "$OUT"
    local rc=$?
    cat "$OUT"
    # Each line is tagged with its round, so the report can pair the engines of one round.
    grep '^{' "$OUT" | sed "s/}\$/,\"round\":$ROUND}/" >> "$RESULTS"
    [ $rc -eq 0 ] || log "warning: $label exited with status $rc"
}

# One function per engine, so a round can run them in any order.
run_strata() {
    [ -n "$STRATA" ] || return 0
    if [ -x "$STRATA" ]; then
        run strata "$STRATA" "$@"
    else
        log "warning: $STRATA is not executable; skipping Strata"
    fi
}
# The engine flag comes last so it wins over anything in "$@".
run_lmdb() { run lmdb "$PEER" "$@" --engine lmdb; }
run_sqlite() { run sqlite "$PEER" "$@" --engine sqlite; }
# libmdbx, raw workloads only (it has no typed engine here); skipped when it cannot be loaded.
MDBX_VERSION=""
if [ -z "${SKIP_MDBX:-}" ]; then
    if [ -z "${MDBX_LIBRARY:-}" ]; then
        MDBX_LIBRARY="$PEER_DIR/.mdbx/libmdbx.so"
        [ -f "$MDBX_LIBRARY" ] || "$PEER_DIR/get-mdbx.sh" >&2 || log "warning: could not fetch libmdbx (Tools/PeerBench/get-mdbx.sh)"
    fi
    export MDBX_LIBRARY
    if ! MDBX_VERSION="$("$PEER" --mdbx-version)"; then
        MDBX_VERSION=""
        log "warning: libmdbx not available ($MDBX_LIBRARY); no mdbx column"
    fi
fi
run_mdbx() {
    [ -n "$MDBX_VERSION" ] || return 0
    local mdbx_args=() mdbx_workloads=0 skip_next="" argument
    for argument in "$@"; do
        if [ -n "$skip_next" ]; then skip_next=""; continue; fi
        case "$argument" in
            typed) continue ;;
            --typed-records) skip_next=1; continue ;;
            fillseq|fillrandom|readrandom|readseq|synccommit|smallcommit|mixed|notify|groupcommit) mdbx_workloads=1 ;;
        esac
        mdbx_args+=("$argument")
    done
    # Only typed asked for: nothing for mdbx to run.
    if [ $mdbx_workloads -eq 1 ] || [ "${#mdbx_args[@]}" -eq "$#" ]; then
        run mdbx "$PEER" "${mdbx_args[@]}" --engine mdbx
    fi
}
# SQLite as GRDB opens it, for the typed workload only (the engine has no raw workloads).
run_sqlite_defaults() {
    case " $* " in
        *" typed "*)
            local typed_args=(typed) previous="" argument
            for argument in "$@"; do
                [ "$previous" = "--typed-records" ] && typed_args+=(--typed-records "$argument")
                previous="$argument"
            done
            run sqlite-defaults "$PEER" "${typed_args[@]}" --engine sqlite-defaults ;;
    esac
}

# Every engine once per round. The order rotates by one engine each round, so that no engine is
# always the first of a round (the first runs on the machine as the previous round left it).
ENGINES=(run_strata run_lmdb run_sqlite run_mdbx run_sqlite_defaults)
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
    [ "$ROUNDS" -gt 1 ] && log "round $ROUND of $ROUNDS"
    for ((slot = 0; slot < ${#ENGINES[@]}; slot++)); do
        "${ENGINES[$(( (slot + ROUND - 1) % ${#ENGINES[@]} ))]}" "$@"
    done
done

log "results: $RESULTS"

# --- report ----------------------------------------------------------------
CMD="$(printf '%q ' "$0" "$@")"
CPU="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
VERSIONS="$(dpkg-query -W -f='${Package} ${Version}; ' liblmdb0 libsqlite3-0 2>/dev/null || true)"

python3 - "$RESULTS" "$CMD" "$(nproc)" "$CPU" "$(uname -sr)" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$VERSIONS" "$MDBX_VERSION" <<'PY' | tee "$TABLE"
import json, sys

path, cmd, ncpu, cpu, kernel, date, versions, mdbx_version = sys.argv[1:9]
engines = ["strata", "lmdb", "sqlite"]  # columns; "sqlite-defaults" joins when it ran (typed)
results = {}   # (engine, workload) -> {round: record} (within a round, the last one wins)
order = []     # workloads in first-seen order
with open(path) as f:
    for line in f:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("workload") == "groupcommit":
            # One line per writer count: a row group each.
            r["workload"] = f"groupcommit {r.get('writers')}w"
        key = (r.get("engine"), r.get("workload"))
        results.setdefault(key, {})[r.get("round", 1)] = r
        if r.get("workload") not in order:
            order.append(r.get("workload"))

# (label, workload, field) rows; ops/s rows are higher-is-better, the others lower-is-better.
rows = []
has_cpu = {r.get("workload") for rounds in results.values() for r in rounds.values() if "cpu_ops_per_sec" in r}
for w in order:
    rows.append((f"{w} (ops/s)", w, "ops_per_sec"))
    if w in has_cpu:
        # Operations per second of the process's CPU time (user + system): what the engine
        # costs, without the time a loaded machine kept it waiting (flushes are waits too).
        rows.append((f"{w} (ops per cpu s)", w, "cpu_ops_per_sec"))
    if w == "mixed":
        rows.append(("mixed readers (gets/s, total)", w, "reader_gets_per_sec"))
    if w == "smallcommit":
        rows += [("smallcommit p50 (us)", w, "commit_p50_us"), ("smallcommit p99 (us)", w, "commit_p99_us")]
    if w.startswith("groupcommit"):
        rows += [(f"{w} p50 (us)", w, "p50_us"), (f"{w} p99 (us)", w, "p99_us"),
                 (f"{w} commits (flushes)", w, "commits")]
    if w == "notify":
        rows += [("notify p50 (us)", w, "p50_us"), ("notify p99 (us)", w, "p99_us"),
                 ("notify max (us)", w, "max_us"), ("notify coalesced commits", w, "coalesced"),
                 ("notify first commit after idle (us)", w, "first_after_idle_us"),
                 ("notify observer cpu (%)", w, "cpu_percent"),
                 ("notify idle observer cpu (%)", w, "idle_cpu_percent")]

def values(engine, w, field):
    """{round: value} of one engine's field."""
    found = {}
    for n, r in results.get((engine, w), {}).items():
        v = r.get(field)
        if isinstance(v, (int, float)):
            found[n] = v
    return found

def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2

def get(engine, w, field):
    """The engine's median over the rounds (its only value with one round)."""
    return median(values(engine, w, field).values())

def ratio(engine, peer, w, field):
    """engine/peer as the median of the ratios within each round (both measured close together),
    with the range of those ratios when there were several rounds."""
    mine, theirs = values(engine, w, field), values(peer, w, field)
    per_round = [mine[n] / theirs[n] for n in mine if theirs.get(n) not in (None, 0)]
    if not per_round:
        return "–"
    text = f"{median(per_round):.2f}x"
    if len(per_round) > 1:
        text += f" ({min(per_round):.2f}–{max(per_round):.2f})"
    return text

def fmt(v):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}" if abs(v) >= 1 else f"{v:.3f}"

records = sorted({r.get("records") for rounds in results.values() for r in rounds.values() if r.get("records") is not None})
rounds = max((n for by_round in results.values() for n in by_round), default=1)
print("## Strata vs LMDB vs SQLite" + (" vs libmdbx" if any(e == "mdbx" for e, _ in results) else ""))
print()
print(f"- command: `{cmd.strip()}`")
print(f"- records: {', '.join(map(str, records)) or '–'}")
print(f"- machine: {ncpu} cores, {cpu}, {kernel}")
if versions.strip():
    print(f"- peers: {versions.strip().rstrip(';')}")
if mdbx_version:
    print(f"- libmdbx: {mdbx_version}")
print(f"- date: {date}")
if rounds > 1:
    print(f"- rounds: {rounds}, engines alternating; figures are each engine's median, ratios the median "
          "(range) of the ratios within each round")
print()
if any(e == "mdbx" for e, _ in results):
    engines.append("mdbx")
if any(e == "sqlite-defaults" for e, _ in results):
    engines.append("sqlite-defaults")
peers = ["lmdb", "sqlite"] + (["mdbx"] if "mdbx" in engines else [])
print("| workload | " + " | ".join(engines) + " | " + " | ".join(f"strata/{p}" for p in peers) + " |")
print("|---|" + "---:|" * (len(engines) + len(peers)))
for label, w, field in rows:
    vals = [get(e, w, field) for e in engines]
    ratios = [ratio("strata", p, w, field) if p in engines else "–" for p in peers]
    print(f"| {label} | " + " | ".join(fmt(v) for v in vals) + " | " + " | ".join(ratios) + " |")
print()
print("ops/s and ops per cpu s rows: higher is better; latency (us) and cpu (%) rows: lower is better.")
PY
log "table: $TABLE"
