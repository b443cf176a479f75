#!/usr/bin/env bash
# mdq scaled out on one machine: two clickhouse-servers (127.0.0.1 and 127.0.0.2) as the two-shard
# cluster mdq_local, one redis-server for the shared rate limits, and two `mdq serve` instances on
# loopback, all of it (configs, data, logs, PID files) under one directory.
#
#   scripts/local-cluster.sh start|stop|status [DIR]     (DIR: $MDQ_CLUSTER_DIR, else ./data/local-cluster)
#
# Ports (environment): CH_HTTP_PORT (18123), CH_TCP_PORT (19000), CH_INTERSERVER_PORT (19009), both
# servers on the same ones; REDIS_PORT (16379); MDQ_PORTS ("8080 8081"). Needs clickhouse-server,
# redis-server and a built checkout (npm ci). On Linux every 127.x.y.z address is loopback; elsewhere
# add 127.0.0.2 first (macOS: sudo ifconfig lo0 alias 127.0.0.2).
#
# `start` prints the store URL; every mdq command then takes it from MDQ_STORE:
#   source DIR/env && node bin/mdq.js import bars daily.csv && node bin/mdq.js keys create --name me
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${2:-${MDQ_CLUSTER_DIR:-./data/local-cluster}}"
CH_HTTP_PORT="${CH_HTTP_PORT:-18123}"
CH_TCP_PORT="${CH_TCP_PORT:-19000}"
CH_INTERSERVER_PORT="${CH_INTERSERVER_PORT:-19009}"
REDIS_PORT="${REDIS_PORT:-16379}"
read -r -a MDQ_PORTS <<<"${MDQ_PORTS:-8080 8081}"
CLUSTER=mdq_local
HOSTS=(127.0.0.1 127.0.0.2)
STORE="clickhouse://127.0.0.1:${CH_HTTP_PORT}/mdq?cluster=${CLUSTER}"
REDIS_URL="redis://127.0.0.1:${REDIS_PORT}"
# How long a server may take to start or to stop before it counts as failed (a loaded machine is slow).
WAIT_SECONDS="${WAIT_SECONDS:-120}"

die() {
  echo "local-cluster: $*" >&2
  exit 1
}

# The services, in start order, and how each one's command line is recognised (a PID file may
# outlive its process, and the PID be reused).
SERVICES=(ch1 ch2 redis mdq1 mdq2)
pattern() {
  case "$1" in
    ch1 | ch2) echo "clickhouse-server --config-file=$DIR/$1/config.xml " ;;
    redis) echo "redis-server 127.0.0.1:${REDIS_PORT} " ;;
    mdq1) echo "bin/mdq.js --store $STORE serve --port ${MDQ_PORTS[0]} " ;;
    mdq2) echo "bin/mdq.js --store $STORE serve --port ${MDQ_PORTS[1]} " ;;
  esac
}

# The PID of a running service, or nothing.
pid_of() {
  local file="$DIR/pids/$1.pid" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$(pattern "$1")"; then
    echo "$pid"
  elif [ ! -d /proc ] && kill -0 "$pid" 2>/dev/null; then
    echo "$pid" # no /proc to check the command line against
  fi
}

http_ok() {
  node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"
}

# wait_for WHAT PID COMMAND...: until COMMAND succeeds; fails if PID exits or WAIT_SECONDS pass.
wait_for() {
  local what="$1" pid="$2" deadline=$((SECONDS + WAIT_SECONDS))
  shift 2
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || die "$what exited while starting (see its log under $DIR)"
    [ "$SECONDS" -lt "$deadline" ] || die "$what did not start within ${WAIT_SECONDS} s (see its log under $DIR)"
    sleep 0.2
  done
}

# fill TEMPLATE OUT NAME=VALUE...: the template (scripts/clickhouse/, shared with the tests) with each {{NAME}} replaced.
fill() {
  local template="$1" out="$2" script=(-e '')
  shift 2
  for pair in "$@"; do script+=(-e "s|{{${pair%%=*}}}|${pair#*=}|g"); done
  sed "${script[@]}" "$template" >"$out"
  if grep -q '{{' "$out"; then die "$out: a name in double braces was left unfilled"; fi
}

start_clickhouse() {
  local name="$1" host="$2" dir="$DIR/$1"
  mkdir -p "$dir"/{log,data,tmp,user_files,format_schemas,config.d}
  fill "$ROOT/scripts/clickhouse/config.xml" "$dir/config.xml" DIR="$dir" HOST="$host" \
    HTTP_PORT="$CH_HTTP_PORT" TCP_PORT="$CH_TCP_PORT" INTERSERVER_PORT="$CH_INTERSERVER_PORT"
  fill "$ROOT/scripts/clickhouse/users.xml" "$dir/users.xml"
  fill "$ROOT/scripts/clickhouse/cluster.xml" "$dir/config.d/cluster.xml" CLUSTER="$CLUSTER" TCP_PORT="$CH_TCP_PORT"
  (cd "$dir" && exec clickhouse-server --config-file="$dir/config.xml" </dev/null >"$dir/log/stdout.log" 2>&1) &
  echo $! >"$DIR/pids/$name.pid"
}

start_mdq() {
  local name="$1" port="$2"
  (cd "$ROOT" && exec node bin/mdq.js --store "$STORE" serve --port "$port" --redis-url "$REDIS_URL" \
    </dev/null >"$DIR/$name.log" 2>&1) &
  echo $! >"$DIR/pids/$name.pid"
}

start() {
  command -v clickhouse-server >/dev/null || die "clickhouse-server is not installed (Debian: apt-get install clickhouse-server)"
  command -v redis-server >/dev/null || die "redis-server is not installed (Debian: apt-get install redis-server)"
  [ -f "$ROOT/dist/src/cli/main.js" ] || die "mdq is not built: run npm ci (or npm run build) in $ROOT"
  for s in "${SERVICES[@]}"; do
    [ -z "$(pid_of "$s")" ] || die "$s is already running (pid $(pid_of "$s")): scripts/local-cluster.sh stop $DIR"
  done
  mkdir -p "$DIR/pids" "$DIR/redis"
  DIR="$(cd "$DIR" && pwd)"
  # A failed start leaves nothing running.
  trap 'stop >/dev/null 2>&1 || true' EXIT

  start_clickhouse ch1 "${HOSTS[0]}"
  start_clickhouse ch2 "${HOSTS[1]}"
  (exec redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$DIR/redis" --appendonly yes --save '' \
    </dev/null >"$DIR/redis/redis.log" 2>&1) &
  echo $! >"$DIR/pids/redis.pid"
  wait_for ch1 "$(cat "$DIR/pids/ch1.pid")" http_ok "http://${HOSTS[0]}:${CH_HTTP_PORT}/ping"
  wait_for ch2 "$(cat "$DIR/pids/ch2.pid")" http_ok "http://${HOSTS[1]}:${CH_HTTP_PORT}/ping"
  wait_for redis "$(cat "$DIR/pids/redis.pid")" redis-cli -p "$REDIS_PORT" ping

  node "$ROOT/bin/mdq.js" --store "$STORE" migrate
  start_mdq mdq1 "${MDQ_PORTS[0]}"
  start_mdq mdq2 "${MDQ_PORTS[1]}"
  wait_for mdq1 "$(cat "$DIR/pids/mdq1.pid")" http_ok "http://127.0.0.1:${MDQ_PORTS[0]}/readyz"
  wait_for mdq2 "$(cat "$DIR/pids/mdq2.pid")" http_ok "http://127.0.0.1:${MDQ_PORTS[1]}/readyz"
  trap - EXIT

  printf 'export MDQ_STORE=%q\nexport REDIS_URL=%q\n' "$STORE" "$REDIS_URL" >"$DIR/env"
  echo "store:     $STORE"
  echo "instances: http://127.0.0.1:${MDQ_PORTS[0]} http://127.0.0.1:${MDQ_PORTS[1]} (rate limits shared through $REDIS_URL)"
  echo "next:      source $DIR/env && node bin/mdq.js keys create --name me"
}

# Stops every service that runs (mdq first), each by its PID: SIGTERM, then SIGKILL after WAIT_SECONDS.
stop() {
  local i pid deadline
  for ((i = ${#SERVICES[@]} - 1; i >= 0; i--)); do
    pid="$(pid_of "${SERVICES[i]}")"
    if [ -n "$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      deadline=$((SECONDS + WAIT_SECONDS))
      while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
      echo "${SERVICES[i]}: stopped (pid $pid)"
    fi
    rm -f "$DIR/pids/${SERVICES[i]}.pid"
  done
}

status() {
  local s pid all=0
  for s in "${SERVICES[@]}"; do
    pid="$(pid_of "$s")"
    if [ -n "$pid" ]; then echo "$s: running (pid $pid)"; else echo "$s: stopped" && all=1; fi
  done
  return "$all"
}

# PID files name processes by absolute paths.
if [ -d "$DIR" ]; then DIR="$(cd "$DIR" && pwd)"; fi
case "${1:-}" in
  start) start ;;
  stop) if [ -d "$DIR" ]; then stop; fi ;;
  status)
    [ -d "$DIR" ] || die "nothing at $DIR"
    status
    ;;
  *) die "usage: scripts/local-cluster.sh start|stop|status [DIR]" ;;
esac
