# Sourced by the load scripts: build the release binaries (server and load generator),
# start and stop servers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --quiet --bin leekha --bin leekha-loadtest
LEEKHA=${LEEKHA_BIN:-./target/release/leekha}
LOADTEST=./target/release/leekha-loadtest
SERVER_PIDS=()

free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# start_server PORT DATABASE_URL LOGFILE: starts a server and waits until /readyz answers 200.
start_server() {
  local port=$1 url=$2 log=$3
  DATABASE_URL="$url" LEEKHA_BIND="127.0.0.1:$port" LEEKHA_JWT_SECRET="bench-secret-bench-secret-bench-secret" \
    LEEKHA_AUTH_RATE_PER_MINUTE=1000000 LEEKHA_MAX_ACTIVE_GAMES_PER_USER=100000 RUST_LOG="${RUST_LOG:-warn}" "$LEEKHA" serve >>"$log" 2>&1 &
  SERVER_PIDS+=($!)
  for _ in $(seq 1 200); do
    if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then return 0; fi
    sleep 0.05
  done
  echo "server on $port did not become ready; log:" >&2
  tail -n 20 "$log" >&2
  return 1
}

stop_servers() {
  for pid in "${SERVER_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${SERVER_PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  SERVER_PIDS=()
}

# Samples the first server's RSS every half second while process $1 (the load) runs, then
# sets PEAK (KiB, over the last 8 s: the load itself) and PEAK_ALL (KiB, the whole run).
# The registrations before the load hash passwords with argon2 (19 MiB each, freed at once),
# which says nothing about what the games cost; PEAK leaves them out.
sample_peak_rss() {
  local samples=()
  while kill -0 "$1" 2>/dev/null; do
    samples+=("$(ps -o rss= -p "${SERVER_PIDS[0]}" | tr -d ' ')")
    sleep 0.5
  done
  PEAK=$(printf '%s\n' "${samples[@]: -16}" | sort -n | tail -n1)
  PEAK_ALL=$(printf '%s\n' "${samples[@]}" | sort -n | tail -n1)
}
