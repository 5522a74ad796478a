#!/usr/bin/env bash
# Every check, in order: install (from the lock file), type-check, build the executable, libSQL's
# server for the server-store tests, the suite under Bun, the suite under Deno, the shared suites
# against sqld (both include the protocol suite against the binary and
# against `deno run`), then the Python client's tests against the binary. Runs everything, prints each runner's summary,
# and exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== installing dependencies (npm ci)"
  npm ci --no-audit --no-fund || exit 1
fi

BIN=node_modules/.bin
failed=()
summary=()
started=$(date +%s)
echo "== npm test: every check, about 20-25 minutes on 2 cores (npm run test:fast: the in-process tests, about a minute)"
# every suite or test that skips writes one line here (tests/support/skips.ts); the summary lists them
SKIP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/longrun-skips-XXXXXX")

step() {
  local name=$1; shift
  echo
  echo "== $name"
  local log
  log=$(mktemp)
  local skips="$SKIP_DIR/$(( ${#summary[@]} + 1 ))"
  LONGRUN_SKIP_LOG="$skips" "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  summary+=("$name: $( [ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)" ) $(sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -aE '^ *[0-9]+ (pass|fail|skip)$|^Ran [0-9]+ tests? |^(ok|FAILED) \| [0-9]+ passed|^OK|^FAILED \(' | tr '\n' ' ')")
  if [ -s "$skips" ]; then
    while IFS= read -r line; do skipped+=("$name: $line"); done < <(sort -u "$skips")
  fi
  rm -f "$log"
  [ "$rc" = 0 ] || failed+=("$name")
}
skipped=()

step "type-check (tsc --noEmit, strict)" "$BIN/tsc" -p .
step "build dist/longrun (compile.sh)" bash compile.sh
step "build dist/longrun-crashtest (crash points kept, for the crash tests)" "$BIN/bun" scripts/compile.ts dist/longrun-crashtest --crash-points
# tests get a temp directory of their own: whatever they leave in it is reported (and fails the run)
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/longrun-tests-XXXXXX")
chmod 0711 "$TEST_TMP"   # tests that run a command as nobody (setpriv) must reach their directories in it
export TMPDIR="$TEST_TMP"

# libSQL's server (sqld, pinned in tools/sqld): tests/server and the suites below start their own on 127.0.0.1
step "libSQL server for the server-store tests (scripts/sqld.sh)" bash scripts/sqld.sh
step "tests on Bun" "$BIN/bun" test --timeout 60000 ./tests/
step "tests on Deno" "$BIN/deno" test -A --no-check tests/
# one suite, two stores: the contract, run-ledger and protocol suites again, each root on a libSQL server
step "contract, run ledger, protocol and forgetting against sqld (Bun)" env LONGRUN_TEST_STORE=sqld "$BIN/bun" test --timeout 60000 ./tests/contract ./tests/ledger ./tests/protocol ./tests/memory/forget.test.ts ./tests/memory/retention.test.ts
step "contract, run ledger, protocol and forgetting against sqld (Deno)" env LONGRUN_TEST_STORE=sqld "$BIN/deno" test -A --no-check tests/contract tests/ledger tests/protocol tests/memory/forget.test.ts tests/memory/retention.test.ts
step "Python client (unittest, against dist/longrun)" python3 -m unittest discover -s clients/python
step "demo (dist/longrun demo)" ./dist/longrun demo

# (the executable keeps libSQL's native module in the user's cache, not in TMPDIR: nothing may be left)
left=$(find "$TEST_TMP" -mindepth 1 -maxdepth 1 2>/dev/null)
if [ -n "$left" ]; then
  summary+=("temp files: FAILED, tests left in $TEST_TMP: $(echo "$left" | head -5 | tr '\n' ' ')")
  failed+=("temp files")
else
  summary+=("temp files: ok (no test left anything behind)")
fi
rm -rf "$TEST_TMP"

rm -rf "$SKIP_DIR"

echo
echo "== summary ($(( ($(date +%s) - started) / 60 )) min)"
for s in "${summary[@]}"; do echo "  $s"; done
if [ ${#skipped[@]} -gt 0 ]; then
  echo "  skipped: ${#skipped[@]} suites or tests did not run here:"
  for s in "${skipped[@]}"; do echo "    - $s"; done
else
  echo "  skipped: none (every suite ran)"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "all checks that ran passed; ${#skipped[@]} skipped (listed above)"
else
  echo "all checks passed"
fi
