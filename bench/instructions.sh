#!/usr/bin/env bash
# Instructions per request of one route, counted by valgrind's callgrind: about the same count for
# the same code whatever else the machine is doing, so a change of a few per cent shows
# (docs/performance.md, "Counting instructions"). Every route is warmed and counted in one load, on
# the same connections (bench/instructions-load.ts): a load on new connections can make V8 recompile
# code on threads that fall behind under valgrind. Counts of the key route still spread by up to
# ~3%: for a smaller difference, alternate the builds, several counts each, and compare the lowest
# ("How noisy an instruction count is"). Not part of `npm run bench`: under valgrind the server runs
# ~20 times slower, and instructions are not CPU time (the kernel's share and the cache misses are
# not counted).
#
#   npm run build && bench/instructions.sh                 # GET /v1/webhooks/key, PostgreSQL + Redis
#   bench/instructions.sh --minimal                        # the bare Fastify ceiling (bench/minimal-fastify.ts)
#   bench/instructions.sh --signed                         # signed GET /v1/customers/{id} (bench/instructions-signed.ts)
#   bench/instructions.sh --post                           # signed idempotent POST /v1/customers, a new key each
#   REQUESTS=8000 bench/instructions.sh                    # more requests: less variation (default 8000)
#   SERVER_ENV="LOG_LEVEL=warn" bench/instructions.sh      # extra settings for the server (the ceiling's too)
#   SERVER_ENV="NODE_OPTIONS=--perf-basic-prof" bench/instructions.sh   # JIT frames named, then:
#   npx tsx bench/lib/callgrind-names.ts <callgrind dir> [--against <the ceiling's dir>]
#
# The server runs the built bundle on a scratch database of PostgreSQL's (DATABASE_URL's server) and on
# REDIS_URL, with its payment and webhook workers' passes 10 minutes apart: an idle pass is work per
# second, not per request, and under valgrind a second holds few requests. It is warmed with 20,000
# requests before counting starts. Prints the main thread's count per request and all threads'.
# With --signed or --post, a bench partner and 100 customers are made through the API first, and
# every request is a signed GET sent once, as in scenario 1, or a signed create with a new key, as
# in scenario 3 (20,000 warm-up customers and the counted ones are written); PostgreSQL's and
# Redis's own work is not counted (they are other processes), only the server's.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }

MODE=${1:-}
REQUESTS=${REQUESTS:-8000}
WARM=${WARM:-20000}
DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/instructions-XXXXXX")
PORT=$((30000 + RANDOM % 20000))
# valgrind names its control pipe after $HOST, and the server reads HOST too: one value for both.
export HOST=127.0.0.1
VALGRIND=(valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no "--callgrind-out-file=$OUT/cg.out")

if [[ "$MODE" == --minimal ]]; then
  ROUTE=/key
  # shellcheck disable=SC2086 # SERVER_ENV is a list of NAME=value words
  env PORT=$PORT ${SERVER_ENV:-} "${VALGRIND[@]}" node --import tsx bench/minimal-fastify.ts >"$OUT/server.log" 2>&1 &
else
  ROUTE=/v1/webhooks/key
  [[ "$MODE" == --signed ]] && ROUTE="/v1/customers/{id}, signed"
  [[ "$MODE" == --post ]] && ROUTE="POST /v1/customers, signed"
  ADMIN_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
  DB="instructions_$$"
  BASE=${DATABASE_URL%/*}
  psql -q "$DATABASE_URL" -c "CREATE DATABASE $DB" >/dev/null
  trap 'psql -q "$DATABASE_URL" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
  mkdir -p "$OUT/data"
  # shellcheck disable=SC2086 # SERVER_ENV is a list of NAME=value words
  env DATA_DIR="$OUT/data" ADMIN_TOKEN="$ADMIN_TOKEN" LOG_LEVEL=info \
    TRUST_PROXY=127.0.0.1 RATE_LIMIT_GLOBAL=1000000000/60s RATE_LIMIT_TOKEN=1000000000/900s \
    PUBLIC_BASE_URL="http://127.0.0.1:$PORT" PORT=$PORT ADMIN_PORT=$((PORT + 1)) \
    DATABASE_URL="$BASE/$DB" REDIS_URL="$REDIS_URL" \
    PAYMENT_WORKER_INTERVAL_MS=600000 WEBHOOK_WORKER_INTERVAL_MS=600000 ${SERVER_ENV:-} \
    "${VALGRIND[@]}" node packages/cli/dist/partner-api.js serve >"$OUT/server.log" 2>&1 &
fi
PID=$!
URL="http://127.0.0.1:$PORT$ROUTE"
READY_URL="http://127.0.0.1:$PORT/healthz"
[[ "$MODE" == --minimal ]] && READY_URL=$URL # the bare Fastify has no /healthz
for _ in $(seq 1 300); do
  curl -sf -o /dev/null "$READY_URL" && break
  kill -0 "$PID" 2>/dev/null || { tail -20 "$OUT/server.log" >&2; exit 1; }
  sleep 1
done
# One load for the warm-up and the count, on the same connections (bench/instructions-load.ts).
if [[ "$MODE" == --signed || "$MODE" == --post ]]; then
  COUNTED=$(npx tsx bench/instructions-signed.ts "http://127.0.0.1:$PORT" "http://127.0.0.1:$((PORT + 1))" \
    "$ADMIN_TOKEN" "$PID" "$WARM" "$REQUESTS" "$([[ "$MODE" == --post ]] && echo post || echo get)" |
    sed -n 's/^counted=//p')
else
  COUNTED=$(npx tsx bench/instructions-load.ts "$URL" "$PID" "$WARM" "$REQUESTS" | sed -n 's/^counted=//p')
fi
[[ -n "$COUNTED" ]] || { echo "the load failed" >&2; exit 1; }
REQUESTS=$COUNTED
kill "$PID"
wait "$PID" 2>/dev/null || true
main=$(awk '/^totals:/ {print $2}' "$OUT/cg.out-01")
all=$(cat "$OUT"/cg.out-* | awk '/^totals:/ {s += $2} END {print s}')
echo "$ROUTE: $((main / REQUESTS)) instructions per request on the main thread, $((all / REQUESTS)) in all threads ($REQUESTS requests; callgrind files in $OUT)"
