#!/usr/bin/env bash
# `npm run release [-- ARGS]`: installs from the lock file when node_modules is missing or older
# than package-lock.json (a fresh clone has no bun yet), then builds the release with the pinned
# Bun: node_modules/.bin/bun scripts/release.ts ARGS (see that file for the arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== installing dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi
exec node_modules/.bin/bun scripts/release.ts "$@"
