#!/usr/bin/env bash
# The embedded default under load: the release server on a fresh SQLite file.
#   1. leekha-loadtest, CLIENTS clients in `fetch` mode (a view before every action), for
#      SECONDS: rate, latency, errors; then the player actions in the database against the
#      count the load generator saw acknowledged (they must be equal);
#   2. peak RSS of a fresh server while the same load runs next to 1,000 more active games
#      (PostgreSQL: `benches/reliability.sh`, stage 4).
# Usage: benches/load-sqlite.sh [CLIENTS] [SECONDS]
source "$(dirname "$0")/common.sh"
CLIENTS=${1:-16}
SECONDS_RUN=${2:-20}
WORK=$(mktemp -d)
trap 'stop_servers; rm -rf "$WORK"' EXIT

PORT=$(free_port 18280)
echo "== 1. SQLite, leekha-loadtest --views fetch, $CLIENTS clients, $SECONDS_RUN s"
start_server "$PORT" "$WORK/leekha.db" "$WORK/server.log"
"$LOADTEST" --url "http://127.0.0.1:$PORT" --clients "$CLIENTS" --duration "$SECONDS_RUN" \
  --views fetch --json > "$WORK/load.json"
stop_servers
STORED=$(python3 - "$WORK/leekha.db" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM game_actions WHERE actor = 'player'").fetchone()[0])
PY
)
python3 - "$WORK/load.json" "$STORED" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); l = r["latency_ms"]; stored = int(sys.argv[2])
print(f"actions/s         {r['actions_per_sec']:.1f}  (requests/s {r['requests_per_sec']:.1f}, errors {sum(r['errors'].values())} {r['errors'] or ''})")
print(f"action latency    p50 {l['p50']:.2f} ms  p95 {l['p95']:.2f} ms  p99 {l['p99']:.2f} ms  max {l['max']:.1f} ms")
print(f"acknowledged      {r['actions_ok']}; player actions in the database {stored}: {'equal' if stored == r['actions_ok'] else 'DIFFERENT'}")
sys.exit(0 if stored == r["actions_ok"] else 1)
PY

echo "== 2. SQLite, peak RSS with 1,000 more active games, $CLIENTS clients"
rm -f "$WORK"/leekha.db*
start_server "$PORT" "$WORK/leekha.db" "$WORK/server.log"
"$LOADTEST" --url "http://127.0.0.1:$PORT" --clients "$CLIENTS" --duration 10 --views fetch \
  --idle-games 1000 > /dev/null &
LOAD=$!
sample_peak_rss $LOAD
ACTIVE=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM games WHERE status = 'active'\").fetchone()[0])" "$WORK/leekha.db")
echo "active games: $ACTIVE; server peak RSS under the load: $((PEAK / 1024)) MiB (with the registrations before it: $((PEAK_ALL / 1024)) MiB)"
