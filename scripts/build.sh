#!/usr/bin/env bash
# Builds the bridge binary: the one build of the container image (the Dockerfile's build stage
# runs this script) and of CI (.ci/run runs it outside Docker and starts what it made).
#
#   scripts/build.sh [OUTPUT]        default bin/bridge
#
# The binary is static: cgo for go-sqlite3 (CGO_ENABLED=1) linked with -extldflags -static;
# the osusergo and netgo tags keep glibc's NSS (user and DNS lookups, which a static glibc
# cannot load) out, and sqlite_omit_load_extension keeps dlopen out. It runs on any Linux of
# the same architecture, distroless/static and scratch included: `ldd` says "not a dynamic
# executable".
#
# Build facts (bridge version prints them), from the environment or else from git:
#   VERSION  default: git describe --tags --always --dirty, else "dev"
#   COMMIT   default: git rev-parse HEAD, else "unknown"
#   DATE     default: SOURCE_DATE_EPOCH as RFC 3339, else the current time (UTC)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin/bridge}

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
if [ -z "${DATE:-}" ] && [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%FT%TZ)
fi
date=${DATE:-$(date -u +%FT%TZ)}

for v in "$version" "$commit" "$date"; do
  case $v in
    *[[:space:]\'\"]*) echo "build.sh: VERSION, COMMIT and DATE take no spaces or quotes: $v" >&2; exit 2 ;;
  esac
done

export CGO_ENABLED=1
go build -trimpath \
  -tags osusergo,netgo,sqlite_omit_load_extension \
  -ldflags "-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date -linkmode external -extldflags -static" \
  -o "$out" ./cmd/bridge
echo "built $out: bridge $version (commit $commit, $date)"
