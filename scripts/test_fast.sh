#!/usr/bin/env bash
# The fast lane: the tests that run in the test process only (no dist/longrun, no child process, no
# Claude Code CLI, no sqld, no browser), on Bun and on Deno side by side; nothing is built first.
# tests/support/lanes.ts picks the files by reading the sources. Prints each runtime's output, then
# a summary; exits non-zero if either runtime failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=node_modules/.bin
unset LONGRUN_TEST_STORE   # local roots: the suites against sqld are npm test's
mapfile -t files < <("$BIN/bun" tests/support/lanes.ts)
[ ${#files[@]} -gt 0 ] || { echo "no fast tests found (tests/support/lanes.ts)" >&2; exit 1; }
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
echo "== fast lane: ${#files[@]} test files, on Bun and Deno at once"
"$BIN/bun" test --timeout 60000 "${files[@]/#/./}" >"$logs/bun" 2>&1 & bun_pid=$!
"$BIN/deno" test -A --no-check "${files[@]}" >"$logs/deno" 2>&1 & deno_pid=$!
wait "$bun_pid"; bun_rc=$?
wait "$deno_pid"; deno_rc=$?
echo "== tests on Bun"; cat "$logs/bun"
echo "== tests on Deno"; cat "$logs/deno"
echo "== summary"
echo "  Bun: $( [ "$bun_rc" = 0 ] && echo ok || echo "FAILED (exit $bun_rc)" ) $(sed -E 's/\x1b\[[0-9;]*m//g' "$logs/bun" | grep -aE '^ *[0-9]+ (pass|fail)$' | tr -s ' \n' ' ')"
echo "  Deno: $( [ "$deno_rc" = 0 ] && echo ok || echo "FAILED (exit $deno_rc)" ) $(sed -E 's/\x1b\[[0-9;]*m//g' "$logs/deno" | grep -aE '^(ok|FAILED) \|' | tr -s ' \n' ' ')"
[ "$bun_rc" = 0 ] && [ "$deno_rc" = 0 ]
