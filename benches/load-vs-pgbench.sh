#!/usr/bin/env bash
# Throughput against PostgreSQL's own limit, in one go on one throwaway PostgreSQL:
#   1. pgbench on the equivalent transaction (lock the game row, insert the action, update
#      the snapshot), with CLIENTS clients;
#   2. the server under `leekha-loadtest` with CLIENTS clients, in both view modes (track:
#      views only when a client cannot know them; fetch: a view before every action);
# then both rates and their ratio. Usage: benches/load-vs-pgbench.sh [CLIENTS] [SECONDS]
source "$(dirname "$0")/common.sh"
CLIENTS=${1:-32}
SECONDS_RUN=${2:-20}
source benches/pg-cluster.sh
WORK=$(mktemp -d)
trap 'stop_servers; pg_cleanup; rm -rf "$WORK"' EXIT

psql -q "$PG_BASE_URL/postgres" -c "CREATE DATABASE bench" -c "CREATE DATABASE leekha"
# A snapshot of the size the server stores (~3 KB of JSON).
psql -q "$PG_BASE_URL/bench" <<'SQL'
CREATE TABLE games (id INT PRIMARY KEY, version BIGINT NOT NULL, action_count BIGINT NOT NULL, state TEXT NOT NULL);
CREATE TABLE game_actions (game_id INT NOT NULL, seq BIGINT NOT NULL, action TEXT NOT NULL, created_at TIMESTAMP NOT NULL, PRIMARY KEY (game_id, seq));
INSERT INTO games SELECT g, 1, 0, repeat('{"hands":["QS","10D","AH"]}', 110) FROM generate_series(1, 1000) g;
SQL
cat > "$WORK/tx.sql" <<'SQL'
\set g random(1, 1000)
BEGIN;
UPDATE games SET version = version WHERE id = :g;
SELECT state, action_count FROM games WHERE id = :g;
INSERT INTO game_actions SELECT :g, action_count + 1, '{"type":"play","seat":1,"card":"QS"}', now() FROM games WHERE id = :g;
UPDATE games SET state = state, version = version + 1, action_count = action_count + 1 WHERE id = :g;
COMMIT;
SQL
echo "== pgbench: $CLIENTS clients, $SECONDS_RUN s"
PGBENCH="$PG_BIN/pgbench"
# Every transaction's latency is logged, so that the server's p99 has pgbench's beside it.
"$PGBENCH" -n -c "$CLIENTS" -j 2 -T "$SECONDS_RUN" -f "$WORK/tx.sql" --log --log-prefix="$WORK/pgbench-tx" \
  "$PG_BASE_URL/bench" | tee "$WORK/pgbench.txt" | grep -E "tps|latency"
PG_TPS=$(grep -Eo 'tps = [0-9.]+' "$WORK/pgbench.txt" | head -n1 | awk '{print $3}')
PG_LATENCY=$(python3 - "$WORK" <<'PY'
import glob, sys
# pgbench's log: client, transaction, latency in µs, script, epoch s, µs.
lat = sorted(int(line.split()[2]) for f in glob.glob(sys.argv[1] + "/pgbench-tx.*") for line in open(f))
pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] / 1000
print(f"p50 {pct(0.50):.2f} ms  p95 {pct(0.95):.2f} ms  p99 {pct(0.99):.2f} ms")
PY
)
echo "latency           $PG_LATENCY"

PORT=$(free_port 18080)
start_server "$PORT" "$PG_BASE_URL/leekha" "$WORK/server.log"
# track: clients fetch a view only when they cannot know it (the action-for-action
# comparison with pgbench); fetch: a view before every action (a phone opening the game).
for VIEWS in track fetch; do
  echo "== server: leekha-loadtest --views $VIEWS, $CLIENTS clients, $SECONDS_RUN s"
  "$LOADTEST" --url "http://127.0.0.1:$PORT" --clients "$CLIENTS" --duration "$SECONDS_RUN" \
    --views "$VIEWS" --json > "$WORK/load-$VIEWS.json"
  python3 - "$WORK/load-$VIEWS.json" "$PG_TPS" "$PG_LATENCY" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); pg = float(sys.argv[2])
l = r["latency_ms"]
print(f"server actions/s  {r['actions_per_sec']:.1f}  (requests/s {r['requests_per_sec']:.1f}, errors {sum(r['errors'].values())})")
print(f"action latency    p50 {l['p50']:.2f} ms  p95 {l['p95']:.2f} ms  p99 {l['p99']:.2f} ms")
print(f"pgbench tps       {pg:.1f}  (latency {sys.argv[3]})")
print(f"ratio             {r['actions_per_sec'] / pg * 100:.1f} % of pgbench")
PY
done
