/**
 * Fuzz (not a test): the JSON-RPC door of `longrun serve` and the Claude Code hooks, for longer
 * than the suite does (tests/faults/fuzz_lib.ts; tests/faults/fuzz.test.ts runs it briefly).
 *
 *   node_modules/.bin/bun bench/fuzz.ts [rpc-cases=20000] [seed=1] [hook-gate-runs=1000] [hook-event-runs=300]
 *
 * Prints answers by code, every -32603 with its exact input, violations, RSS before/after;
 * exits 1 when anything was found.
 */
import { chmodSync, copyFileSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatHookReport, formatRpcReport, fuzzHooks, fuzzRpc } from "../tests/faults/fuzz_lib.ts";
import { readTask } from "../tests/support/state.ts";

const repo = realpathSync(fileURLToPath(new URL("..", import.meta.url)));
const [cases = "20000", seed = "1", gate = "1000", events = "300"] = process.argv.slice(2);
// a private copy: a rebuild of dist/ during a long run neither changes it nor fails a spawn (ETXTBSY)
const bin = realpathSync(mkdtempSync(join(tmpdir(), "longrun-fuzz-bin-")));
const binary = join(bin, "longrun");
copyFileSync(join(repo, "dist", "longrun"), binary);
chmodSync(binary, 0o755);
let bad = false;
for (const part of ["rpc", "hooks"] as const) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `longrun-fuzz-${part}-`)));
  try {
    if (part === "rpc") {
      const rep = await fuzzRpc({ binary, root, seed: Number(seed), count: Number(cases), log: (l) => console.log(l) });
      console.log(formatRpcReport(rep, Number(seed)));
      bad ||= rep.violations.length > 0 || rep.internal.length > 0;
    } else if (Number(gate) + Number(events) > 0) {
      const rep = await fuzzHooks({ binary, root, seed: Number(seed), gateCount: Number(gate), eventCount: Number(events), readTask, log: (l) => console.log(l) });
      console.log(formatHookReport(rep, Number(seed)));
      bad ||= rep.violations.length > 0;
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
rmSync(bin, { recursive: true, force: true });
process.exit(bad ? 1 : 0);
