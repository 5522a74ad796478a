#!/usr/bin/env bash
# Builds dist/longrun, one standalone executable (Bun runtime, libSQL and the memory Worker inside).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
mkdir -p dist
node_modules/.bin/bun scripts/compile.ts dist/longrun
