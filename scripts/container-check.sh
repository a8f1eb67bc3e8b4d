#!/usr/bin/env bash
# What the container image would do, proved without Docker (no engine on the build machines):
#
#   1. scripts/build.sh, the Dockerfile's build stage, builds the binary; ldd shows what it needs
#      (nothing: it is static, so distroless/static can run it).
#   2. The image's default: the binary, started with an empty environment (env -i) in an empty
#      folder (the image's WORKDIR /data with its inbox/) on configs/docker/bridge.yaml (the
#      image's /etc/bridge/bridge.yaml), answers /healthz within 30 s, asked by its own
#      `bridge healthcheck` as the HEALTHCHECK does; the status page signs in with the admin
#      token the bridge made in /data/admin.token; bridge doctor passes; SIGTERM stops it.
#   3. compose.yaml's services, when PostgreSQL answers at BRIDGE_TEST_POSTGRES_DSN: the sandbox
#      service, the one-shot migrate, then bridge run on configs/docker/postgres.yaml, and (when
#      NATS answers at BRIDGE_TEST_NATS_URL) the two replicas of the profile "replicas" on NATS;
#      each answers /healthz and bridge doctor passes, a recording dropped into the inbox is
#      uploaded and done, and the status page signs in with the admin token of the secret
#      admin_token and shows the overview. Only what compose mounts differs: the
#      secrets' paths, the host names and the ports, set by the variables compose would not need.
#
# Usage: scripts/container-check.sh (from .ci/run, or by hand). Exit 0 when all of it holds.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
db=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$db" ]; then psql -q "$BRIDGE_TEST_POSTGRES_DSN" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# free_port prints a loopback port nothing listens on.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "no free port found" >&2; return 1
}

# start NAME DIR ARGS...: run the binary in DIR with an empty environment plus the BRIDGE_
# variables in the array env_vars, logging to $work/NAME.log.
start() {
  local name=$1 dir=$2; shift 2
  (cd "$dir" && exec env -i "${env_vars[@]}" "$bin" "$@" >"$work/$name.log" 2>&1) &
  pids+=($!)
}

# await_health NAME ADDR: up to 30 s for `bridge healthcheck` (the image's HEALTHCHECK) to pass
# against the server at ADDR; prints the time it took.
await_health() {
  local name=$1 addr=$2 t0 t1
  t0=$(date +%s%N)
  for _ in $(seq 300); do
    if env -i BRIDGE_SERVER__ADDR="$addr" "$bin" healthcheck --timeout 1s >/dev/null 2>&1; then
      t1=$(date +%s%N)
      echo "$name: /healthz answered 200 after $(( (t1 - t0) / 1000000 )) ms"
      return 0
    fi
    sleep 0.1
  done
  echo "$name: /healthz did not answer within 30 s; its log:" >&2
  cat "$work/$name.log" >&2
  return 1
}

# doctor NAME DIR ARGS...: bridge doctor in the same environment must pass.
doctor() {
  local name=$1 dir=$2; shift 2
  if ! (cd "$dir" && env -i "${env_vars[@]}" "$bin" doctor "$@" >"$work/$name-doctor.log" 2>&1); then
    echo "$name: bridge doctor failed:" >&2
    cat "$work/$name-doctor.log" >&2
    return 1
  fi
  sed "s/^/$name: doctor: /" "$work/$name-doctor.log"
}

# await_done NAME DIR ARGS...: up to 60 s for bridge jobs list (ARGS: its --config) to show a
# job done; prints the time it took.
await_done() {
  local name=$1 dir=$2 t0 t1; shift 2
  t0=$(date +%s%N)
  for _ in $(seq 120); do
    if (cd "$dir" && env -i "${env_vars[@]}" "$bin" jobs list -o json "$@" 2>/dev/null) | grep -q '"state": "done"'; then
      t1=$(date +%s%N)
      echo "$name: the recording dropped into the inbox is done after $(( (t1 - t0) / 1000000 )) ms"
      return 0
    fi
    sleep 0.5
  done
  echo "$name: no job done within 60 s; its log:" >&2
  cat "$work/$name.log" >&2
  return 1
}

# status_page NAME ADDR TOKEN_FILE: the status page at ADDR sends a visitor to /login, signs in
# with the token in TOKEN_FILE (a wrong one is refused) and then shows the overview.
status_page() {
  local name=$1 addr=$2 token jar code
  token=$(tr -d '\n' <"$3")
  jar="$work/$name-cookies"
  code=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://$addr/")
  case "$code" in
    "303 http://$addr/login") ;;
    *) echo "$name: GET / answered $code, want 303 to /login" >&2; return 1 ;;
  esac
  code=$(curl -s -o /dev/null -w '%{http_code}' --data-urlencode "token=wrong-$token" "http://$addr/login")
  if [ "$code" != 401 ]; then echo "$name: a wrong token answered $code, want 401" >&2; return 1; fi
  code=$(curl -s -o /dev/null -w '%{http_code}' -c "$jar" --data-urlencode "token=$token" "http://$addr/login")
  if [ "$code" != 303 ]; then echo "$name: signing in with the admin token answered $code, want 303" >&2; return 1; fi
  if ! curl -s -b "$jar" "http://$addr/" | grep -q 'id="h-sources"'; then
    echo "$name: the overview after signing in does not show the Sources card" >&2; return 1
  fi
  echo "$name: the status page signs in with the admin token in $(basename "$3")"
}

# stop NAME: SIGTERM the last process started, which must exit 0 within 30 s.
stop() {
  local name=$1 pid=${pids[-1]} rc=0
  kill -TERM "$pid"
  timeout 30 tail --pid="$pid" -f /dev/null || { echo "$name: still running 30 s after SIGTERM" >&2; return 1; }
  wait "$pid" || rc=$?
  unset 'pids[-1]'
  if [ "$rc" != 0 ]; then echo "$name: exited $rc after SIGTERM; its log:" >&2; cat "$work/$name.log" >&2; return 1; fi
  echo "$name: stopped cleanly"
}

# 1. The build of the Dockerfile's build stage.
bin="$work/bin/bridge"
"$repo/scripts/build.sh" "$bin"
echo "binary: $(stat -c %s "$bin") bytes"
ldd "$bin" 2>&1 | sed 's/^[[:space:]]*/ldd: /' || true # "not a dynamic executable" exits 1
file "$bin" 2>/dev/null || true
"$bin" version

# 2. The image's default configuration, in an empty environment and folder.
mkdir -p "$work/data/inbox"
port=$(free_port)
env_vars=(BRIDGE_SERVER__ADDR="127.0.0.1:$port")
start image "$work/data" run --config "$repo/configs/docker/bridge.yaml"
await_health image "127.0.0.1:$port"
status_page image "127.0.0.1:$port" "$work/data/admin.token" # the token the bridge made in /data
doctor image "$work/data" --config "$repo/configs/docker/bridge.yaml"
stop image

# 3. compose.yaml's services on PostgreSQL (and NATS), when the test servers answer.
if [ -z "${BRIDGE_TEST_POSTGRES_DSN:-}" ] || ! psql -q "$BRIDGE_TEST_POSTGRES_DSN" -c 'SELECT 1' >/dev/null 2>&1; then
  echo "compose: skipped (no PostgreSQL at BRIDGE_TEST_POSTGRES_DSN)"
  exit 0
fi
db="bridge_compose_$RANDOM$RANDOM"
psql -q "$BRIDGE_TEST_POSTGRES_DSN" -c "CREATE DATABASE $db" >/dev/null
secrets="$work/secrets" && mkdir -p "$secrets" "$work/compose/inbox"
base_dsn=${BRIDGE_TEST_POSTGRES_DSN%%\?*}
echo "${base_dsn%/*}/$db?sslmode=disable" >"$secrets/bridge_dsn"
cp "$repo/configs/docker/secrets/transcripts_key" "$repo/configs/docker/secrets/admin_token" "$secrets/"
sport=$(free_port)
env_vars=()
start sandbox "$work/compose" sandbox --addr "127.0.0.1:$sport" --db "$work/compose/sandbox-server.db" \
  --seed "$repo/configs/sandbox.yaml" --time-scale 0.05
compose_env=(BRIDGE_STORE__DSN_FILE="$secrets/bridge_dsn" BRIDGE_API_KEY_FILE="$secrets/transcripts_key"
  BRIDGE_SERVER__ADMIN_TOKEN_FILE="$secrets/admin_token"
  BRIDGE_API_BASE_URL="http://127.0.0.1:$sport/developer/v1" BRIDGE_SOURCES__0__PATH="$work/compose/inbox")
env_vars=("${compose_env[@]}")
(cd "$work/compose" && env -i "${env_vars[@]}" "$bin" migrate --config "$repo/configs/docker/postgres.yaml") |
  sed 's/^/migrate: /'
port=$(free_port)
env_vars=("${compose_env[@]}" BRIDGE_SERVER__ADDR="127.0.0.1:$port")
start bridge "$work/compose" run --config "$repo/configs/docker/postgres.yaml"
await_health bridge "127.0.0.1:$port"
status_page bridge "127.0.0.1:$port" "$secrets/admin_token"
cp -p "$repo/sandbox/testdata/media/speech.wav" "$work/compose/inbox/"
await_done bridge "$work/compose" --config "$repo/configs/docker/postgres.yaml"
doctor bridge "$work/compose" --config "$repo/configs/docker/postgres.yaml"
stop bridge

if [ -z "${BRIDGE_TEST_NATS_URL:-}" ]; then
  echo "compose replicas: skipped (no NATS at BRIDGE_TEST_NATS_URL)"
  exit 0
fi
for r in replica-1 replica-2; do
  port=$(free_port)
  env_vars=("${compose_env[@]}" BRIDGE_SERVER__ADDR="127.0.0.1:$port" BRIDGE_BUS__DRIVER=nats
    BRIDGE_BUS__URL="$BRIDGE_TEST_NATS_URL" BRIDGE_BUS__SUBJECT_PREFIX=ci_compose)
  start "$r" "$work/compose" run --config "$repo/configs/docker/postgres.yaml"
  await_health "$r" "127.0.0.1:$port"
  status_page "$r" "127.0.0.1:$port" "$secrets/admin_token"
done
doctor replica-2 "$work/compose" --config "$repo/configs/docker/postgres.yaml"
stop replica-2
stop replica-1
