#!/usr/bin/env bash
# Live streams at scale, on a throwaway PostgreSQL (one command):
#   1. 32 load clients alone: action p99 (baseline) and the server's RSS;
#   2. 10,000 open event streams on one game of the same instance while the 32 clients play
#      again: RSS with the streams, action p99 with them, and the fan-out latency (from an
#      action's request to its events' arrival on every one of the 10,000 streams);
#   3. two instances on the same PostgreSQL: the wake-up latency across them (actions
#      through B, waiting on A), for a stream and for long-polls.
# Usage: benches/streams.sh [STREAMS] [SECONDS]
source "$(dirname "$0")/common.sh"
STREAMS=${1:-10000}
SECONDS_LOAD=${2:-20}
# common.sh builds into the cargo target directory, which may be elsewhere.
TARGET=${CARGO_TARGET_DIR:-target}
LEEKHA=$TARGET/release/leekha
LOADTEST=$TARGET/release/leekha-loadtest
source benches/pg-cluster.sh
WORK=$(mktemp -d)
trap 'stop_servers; pg_cleanup; rm -rf "$WORK"' EXIT
psql -q "$PG_BASE_URL/postgres" -c "CREATE DATABASE leekha"
DB="$PG_BASE_URL/leekha"
# Each stream is a connection and a file descriptor, on both sides of the loopback.
ulimit -n "$(( $(ulimit -Hn) < 65536 ? $(ulimit -Hn) : 65536 ))"
if [ "$(ulimit -n)" -lt $((STREAMS + 2000)) ]; then
  echo "the file limit ($(ulimit -n)) is below what $STREAMS streams need in each process; raise it (ulimit -Hn as root)" >&2
  exit 1
fi
export LEEKHA_MAX_CONNECTIONS=$((STREAMS + 5000)) LEEKHA_MAX_STREAMS=$((STREAMS + 1000))

rss_mb() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
field() { python3 -c "import json,sys; d=json.load(open('$1')); print(eval('d' + sys.argv[1]))" "$2"; }

PORT_A=$(free_port 18280)
start_server "$PORT_A" "$DB" "$WORK/a.log"
PID_A=${SERVER_PIDS[0]}
echo "== 1. 32 clients alone (${SECONDS_LOAD} s)"
"$LOADTEST" --url "http://127.0.0.1:$PORT_A" --clients 32 --duration "$SECONDS_LOAD" --json > "$WORK/alone.json"
RSS_ALONE=$(rss_mb "$PID_A")
echo "action p99 $(field "$WORK/alone.json" "['latency_ms']['p99']") ms, $(field "$WORK/alone.json" "['actions_ok']") actions; RSS $RSS_ALONE MB"

echo "== 2. $STREAMS streams on one game, then the 32 clients again"
python3 benches/streams_client.py fanout --url "http://127.0.0.1:$PORT_A" --streams "$STREAMS" \
  --duration $((SECONDS_LOAD + 10)) --pace 1000 --ready-file "$WORK/ready" > "$WORK/fanout.json" &
FAN=$!
for _ in $(seq 1 600); do [ -f "$WORK/ready" ] && break; sleep 0.5; done
echo "streams open: $(cat "$WORK/ready" 2>/dev/null || echo none); RSS $(rss_mb "$PID_A") MB"
"$LOADTEST" --url "http://127.0.0.1:$PORT_A" --clients 32 --duration "$SECONDS_LOAD" --json > "$WORK/with.json"
RSS_WITH=$(rss_mb "$PID_A")
wait $FAN
echo "action p99 $(field "$WORK/with.json" "['latency_ms']['p99']") ms, $(field "$WORK/with.json" "['actions_ok']") actions; RSS $RSS_WITH MB"
echo "fan-out: $(cat "$WORK/fanout.json")"

echo "== 3. wake-ups across two instances on one PostgreSQL"
PORT_B=$(free_port $((PORT_A + 1)))
start_server "$PORT_B" "$DB" "$WORK/b.log"
python3 benches/streams_client.py wake --url "http://127.0.0.1:$PORT_A" --other "http://127.0.0.1:$PORT_B" \
  --samples 100 > "$WORK/wake.json"
echo "wake-up (from B's action request to the event on A): $(cat "$WORK/wake.json")"

echo
echo "| measure | value |"
echo "| --- | --- |"
echo "| action p99, 32 clients alone | $(field "$WORK/alone.json" "['latency_ms']['p99']") ms |"
echo "| action p99, 32 clients + $(field "$WORK/fanout.json" "['streams_open']") open streams | $(field "$WORK/with.json" "['latency_ms']['p99']") ms |"
echo "| server RSS alone / with the streams | $RSS_ALONE MB / $RSS_WITH MB |"
echo "| fan-out p50 / p99 / max ($(field "$WORK/fanout.json" "['deliveries']") deliveries, $(field "$WORK/fanout.json" "['missing']") missing) | $(field "$WORK/fanout.json" "['fanout_ms']['p50']") / $(field "$WORK/fanout.json" "['fanout_ms']['p99']") / $(field "$WORK/fanout.json" "['fanout_ms']['max']") ms |"
echo "| cross-instance wake-up, SSE p50 / p99 | $(field "$WORK/wake.json" "['sse_ms']['p50']") / $(field "$WORK/wake.json" "['sse_ms']['p99']") ms |"
echo "| cross-instance wake-up, long-poll p50 / p99 | $(field "$WORK/wake.json" "['long_poll_ms']['p50']") / $(field "$WORK/wake.json" "['long_poll_ms']['p99']") ms |"
