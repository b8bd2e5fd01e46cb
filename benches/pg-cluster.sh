# Sourced by the load scripts: a throwaway PostgreSQL cluster on a free port, so a script
# can stop and restart it (the machine's own server is never touched). Sets PG_PORT,
# PG_DIR, PG_BIN, PG_BASE_URL and the functions pg_start, pg_stop; cleans up on exit.

PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)"
PG_DIR="$(mktemp -d /tmp/leekha-pg.XXXXXX)"
chown postgres "$PG_DIR" 2>/dev/null || true
PG_PORT=56432
while (exec 3<>"/dev/tcp/127.0.0.1/$PG_PORT") 2>/dev/null; do PG_PORT=$((PG_PORT + 1)); done
PG_BASE_URL="postgres://postgres@127.0.0.1:$PG_PORT"

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" --auth=trust -U postgres >/dev/null
pg_start() {
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PG_DIR -c max_connections=200 -c shared_buffers=256MB" start >/dev/null
}
pg_stop() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" stop >/dev/null 2>&1 || true; }
pg_cleanup() { pg_stop immediate; rm -rf "$PG_DIR"; }
pg_start
