#!/usr/bin/env bash
# The leaderboard with 100,000 rated players on PostgreSQL: latency of the top page, a deep
# page (after the caller, by cursor) and `around=me` for a caller in the middle of the board,
# against a server of the chosen build, over one keep-alive connection, requests in sequence.
# Prints p50/p99/max per page.
#
#   bash benches/leaderboard.sh            # 100000 players, 2000 requests per page
#   PLAYERS=20000 REQUESTS=500 bash benches/leaderboard.sh
#   PROFILE=debug bash benches/leaderboard.sh   # the debug build (slower: an upper bound)
#
# Uses the PostgreSQL server on 127.0.0.1:5432 when it answers (a database of its own, dropped
# at the end), else a throwaway cluster (benches/pg-cluster.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PLAYERS=${PLAYERS:-100000}
REQUESTS=${REQUESTS:-2000}
TARGET=${CARGO_TARGET_DIR:-./target}
PROFILE=${PROFILE:-release}
if [ "$PROFILE" = release ]; then
  cargo build --release --quiet --bin leekha
else
  cargo build --quiet --bin leekha
fi
LEEKHA="$TARGET/$PROFILE/leekha"

if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  PG_BASE_URL="postgres://postgres@127.0.0.1:5432"
  pg_cleanup() { :; }
else
  source benches/pg-cluster.sh
fi
DB="leekha_board_$$"
URL="$PG_BASE_URL/$DB"
PORT=18480
while (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do PORT=$((PORT + 1)); done
LOG=$(mktemp /tmp/leekha-board.XXXXXX.log)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill -TERM "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  psql -q "$PG_BASE_URL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  pg_cleanup
}
trap cleanup EXIT
psql -q "$PG_BASE_URL/postgres" -c "CREATE DATABASE $DB" >/dev/null

DATABASE_URL="$URL" LEEKHA_BIND="127.0.0.1:$PORT" \
  LEEKHA_JWT_SECRET="bench-secret-bench-secret-bench-secret" LEEKHA_AUTH_RATE_PER_MINUTE=1000000 \
  RUST_LOG="${RUST_LOG:-warn}" "$LEEKHA" serve >>"$LOG" 2>&1 &
SERVER=$!
for _ in $(seq 1 200); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.05
done

# The caller, through the API (a real token); then the players, straight into the tables.
TOKEN=$(curl -fsS -H 'content-type: application/json' \
  -d '{"username":"board_bench","password":"bench password 1"}' \
  "http://127.0.0.1:$PORT/api/v1/auth/register" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
echo "seeding $PLAYERS rated players..."
psql -q -v ON_ERROR_STOP=1 "$URL" <<SQL
INSERT INTO users (id, username, username_key, role, is_guest, games_played, games_won,
                   created_at, updated_at, notification_count)
SELECT md5('u' || i)::uuid::text, 'p' || i, 'p' || i, 'player', false, 20, 5, now(), now(), 0
FROM generate_series(1, $PLAYERS) AS i;
-- Ordinals with many exact ties (rounded mu and sigma), as real boards have among new players.
INSERT INTO ratings (user_id, mode, mu, sigma, ordinal, games, listed, updated_at)
SELECT md5('u' || i)::uuid::text, 'solo', m, s, m - 3 * s, 1 + i % 40, i % 97 <> 0, now()
FROM (SELECT i, round((15 + random() * 25)::numeric, 1)::float8 AS m,
             round((1 + random() * 7)::numeric, 1)::float8 AS s
      FROM generate_series(1, $PLAYERS) AS i) r;
-- The caller sits in the middle of the board.
INSERT INTO ratings (user_id, mode, mu, sigma, ordinal, games, listed, updated_at)
SELECT id, 'solo', 25, 5.5, 25 - 16.5, 12, true, now() FROM users WHERE username = 'board_bench';
VACUUM ANALYZE ratings;
VACUUM ANALYZE users;
SQL

python3 - "$PORT" "$TOKEN" "$REQUESTS" <<'PY'
import http.client, json, sys, time
port, token, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conn = http.client.HTTPConnection("127.0.0.1", port)
headers = {"authorization": "Bearer " + token}
def get(path):
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (r.status, body[:300])
    return json.loads(body)
# A cursor after the median player: a deep page.
around = get("/api/v1/leaderboards/solo?around=me&limit=50")
me = next(i for i in around["items"] if i["user"]["username"] == "board_bench")
deep = around["next_cursor"]
pages = {
    "top page (limit 50)": "/api/v1/leaderboards/solo?limit=50",
    "deep page (rank ~%d, cursor)" % me["rank"]: "/api/v1/leaderboards/solo?limit=50&cursor=" + deep,
    "around=me (rank %d)" % me["rank"]: "/api/v1/leaderboards/solo?around=me&limit=50",
}
for name, path in pages.items():
    for _ in range(50):
        get(path)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        get(path)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    print(f"{name:32} n={n} p50={q(0.5):.2f} ms p99={q(0.99):.2f} ms max={times[-1]:.2f} ms")
PY
