#!/usr/bin/env bash
# Reliability under load, on a throwaway PostgreSQL:
#   1. crash: kill -9 the server under load, restart it; `leekha verify` passes and every
#      action answered 200 before the kill is in the action log;
#   2. outage: stop PostgreSQL under load; requests get 503 problem+json (no 500, no hang past
#      the timeout); after PostgreSQL returns, the time until the server serves again;
#   3. two instances on one PostgreSQL playing the same games: no lost or duplicated action;
#   4. server memory (RSS) under load with 1,000 active games;
#   5. abuse: normal load alone, then the same load while one user leaves ten games of
#      target 1,000 to bots (the scheduler plays them out); p99 and errors of both.
# Usage: benches/reliability.sh [CLIENTS]
source "$(dirname "$0")/common.sh"
CLIENTS=${1:-16}
source benches/pg-cluster.sh
WORK=$(mktemp -d)
trap 'stop_servers; pg_cleanup; rm -rf "$WORK"' EXIT
psql -q "$PG_BASE_URL/postgres" -c "CREATE DATABASE leekha"
DB="$PG_BASE_URL/leekha"
FAIL=0

check_acks() { # prints: missing extra total — acknowledged actions absent from the log, and
  # player actions in the log that nobody acknowledged (for these games), by (game, seat, action)
  psql -q "$DB" -c "CREATE TEMP TABLE acks (game_id TEXT, seat INT, action TEXT, version TEXT)" \
    -c "\\copy acks FROM '$1'" -At -c "
      WITH a AS (SELECT game_id, seat, action::jsonb - 'expected_version' AS act, count(*) AS n FROM acks GROUP BY 1, 2, 3),
           l AS (SELECT game_id, seat, action::jsonb - 'seat' AS act, count(*) AS n FROM game_actions
                 WHERE actor = 'player' AND game_id IN (SELECT game_id FROM acks) GROUP BY 1, 2, 3)
      SELECT coalesce(sum(greatest(coalesce(a.n, 0) - coalesce(l.n, 0), 0)), 0),
             coalesce(sum(greatest(coalesce(l.n, 0) - coalesce(a.n, 0), 0)), 0),
             (SELECT count(*) FROM acks)
      FROM a FULL JOIN l USING (game_id, seat, act)" | tail -n1
}

echo "== 1. crash: kill -9 under load"
PORT=$(free_port 18180)
start_server "$PORT" "$DB" "$WORK/server.log"
"$LOADTEST" --url "http://127.0.0.1:$PORT" --clients "$CLIENTS" --duration 12 --timeout 5 \
  --ack-log "$WORK/acks.tsv" --json > "$WORK/crash.json" &
LOAD=$!
sleep 5
kill -9 "${SERVER_PIDS[0]}"; SERVER_PIDS=()
echo "killed the server at t=5 s"
sleep 1
start_server "$PORT" "$DB" "$WORK/server.log"
wait $LOAD
echo "load: $(python3 -c "import json;r=json.load(open('$WORK/crash.json'));print(r['actions_ok'],'acknowledged actions; errors',r['errors'])")"
read -r MISSING EXTRA TOTAL <<<"$(check_acks "$WORK/acks.tsv" | tr '|' ' ')"
echo "acknowledged: $TOTAL; missing from the log: $MISSING (applied but unanswered when killed: $EXTRA)"
[ "$MISSING" = 0 ] || FAIL=1
DATABASE_URL="$DB" "$LEEKHA" verify | tail -n1 || FAIL=1
stop_servers

echo "== 2. outage: stop PostgreSQL under load"
start_server "$PORT" "$DB" "$WORK/server.log"
"$LOADTEST" --url "http://127.0.0.1:$PORT" --clients "$CLIENTS" --duration 14 --timeout 10 --json > "$WORK/outage.json" &
LOAD=$!
sleep 4
pg_stop fast
echo "PostgreSQL stopped at t=4 s"
STATUS=$(curl -s -o "$WORK/body.json" -w '%{http_code} %{time_total}' "http://127.0.0.1:$PORT/readyz")
echo "readyz during the outage: $STATUS $(cat "$WORK/body.json")"
sleep 4
pg_start
T0=$(date +%s.%N)
until curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do sleep 0.05; done
T1=$(date +%s.%N)
RECOVERY=$(python3 -c "print(f'{$T1-$T0:.2f}')")
echo "PostgreSQL back: the server answered ready again after $RECOVERY s"
wait $LOAD
python3 - "$WORK/outage.json" "$RECOVERY" <<'PY' || FAIL=1
import json, sys
r = json.load(open(sys.argv[1])); rec = float(sys.argv[2])
errs = r["errors"]
print("errors during the outage:", errs)
print(f"max action latency {r['latency_ms']['max']:.0f} ms")
bad = {k: v for k, v in errs.items() if k.startswith("5") and not k.startswith("503")}
assert not bad, f"non-503 server errors: {bad}"
assert rec <= 5.0, f"recovery took {rec} s"
PY
DATABASE_URL="$DB" "$LEEKHA" verify | tail -n1 || FAIL=1
stop_servers

echo "== 3. two instances on one PostgreSQL, the same games"
P1=$(free_port 18280); start_server "$P1" "$DB" "$WORK/s1.log"
P2=$(free_port $((P1 + 1))); start_server "$P2" "$DB" "$WORK/s2.log"
rm -f "$WORK/acks2.tsv"
"$LOADTEST" --url "http://127.0.0.1:$P1" --url "http://127.0.0.1:$P2" --clients "$CLIENTS" --duration 10 \
  --ack-log "$WORK/acks2.tsv"
read -r MISSING EXTRA TOTAL <<<"$(check_acks "$WORK/acks2.tsv" | tr '|' ' ')"
echo "acknowledged: $TOTAL; missing from the log: $MISSING; in the log but never acknowledged: $EXTRA"
[ "$MISSING" = 0 ] && [ "$EXTRA" = 0 ] || FAIL=1
DATABASE_URL="$DB" "$LEEKHA" verify | tail -n1 || FAIL=1
stop_servers

echo "== 4. memory with 1,000 active games"
start_server "$PORT" "$DB" "$WORK/server.log"
"$LOADTEST" --url "http://127.0.0.1:$PORT" --clients "$CLIENTS" --duration 10 --idle-games 1000 > "$WORK/mem.txt" &
LOAD=$!
sample_peak_rss $LOAD
ACTIVE=$(psql -At "$DB" -c "SELECT count(*) FROM games WHERE status = 'active'")
echo "active games: $ACTIVE; server peak RSS under the load: $((PEAK / 1024)) MiB (with the registrations before it: $((PEAK_ALL / 1024)) MiB)"
stop_servers

echo "== 5. abuse: ten bot-only games of target 1,000 under normal load"
start_server "$PORT" "$DB" "$WORK/server.log"
BASE="http://127.0.0.1:$PORT"
"$LOADTEST" --url "$BASE" --clients "$CLIENTS" --duration 10 --json > "$WORK/alone.json"
TOKEN=$(curl -fsS -X POST "$BASE/api/v1/auth/register" -H 'content-type: application/json' \
  -d '{"username":"quitter","password":"quitter-password"}' | python3 -c 'import json,sys;print(json.load(sys.stdin)["access_token"])')
"$LOADTEST" --url "$BASE" --clients "$CLIENTS" --duration 10 --json > "$WORK/abused.json" &
LOAD=$!
sleep 1
for _ in $(seq 1 10); do
  GAME=$(curl -fsS -X POST "$BASE/api/v1/games" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
    -d '{"rules":{"target_score":1000},"seats":[{"kind":"me"},{"kind":"bot"},{"kind":"bot"},{"kind":"bot"}]}' |
    python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
  curl -fsS -o /dev/null -w 'resign %{http_code} in %{time_total} s\n' -X POST "$BASE/api/v1/games/$GAME/resign" -H "authorization: Bearer $TOKEN"
done
wait $LOAD
python3 - "$WORK/alone.json" "$WORK/abused.json" <<'PY' || FAIL=1
import json, sys
alone, abused = (json.load(open(p)) for p in sys.argv[1:3])
for name, r in (("alone", alone), ("with the bot games", abused)):
    print(f"{name}: {r['actions_ok']} actions, p99 {r['latency_ms']['p99']:.1f} ms, max {r['latency_ms']['max']:.0f} ms, errors {r['errors']}")
assert not abused["errors"], "errors under abuse"
PY
UNFINISHED=$(psql -At "$DB" -c "SELECT count(*) FROM games g JOIN users u ON u.id = g.created_by WHERE u.username = 'quitter' AND g.status <> 'finished'")
echo "bot games still running when the load ended: $UNFINISHED of 10"
stop_servers

[ "$FAIL" = 0 ] && echo "reliability: all checks passed" || { echo "reliability: FAILED"; exit 1; }
