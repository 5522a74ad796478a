/**
 * Soak (not a test): many processes on one root, servers SIGKILLed at random (or at crash points)
 * over and over, A1-A4 checked after each kill. The workload and the checks are
 * tests/faults/soak_lib.ts, which tests/faults/soak.test.ts runs briefly in the suite.
 *
 *   node_modules/.bin/bun bench/soak_kills.ts [kills=1000] [seed=1] [--servers 1|2] [--hooks N] [--crash-rate 0.3] [--keep]
 *
 * Needs dist/longrun (./compile.sh); with dist/longrun-crashtest present
 * (`bun scripts/compile.ts dist/longrun-crashtest --crash-points`) some server generations are
 * started with a random LONGRUN_CRASH_AT as well. Prints kills, acknowledged writes by kind,
 * violations (listed), temp files left, orphan blobs and the elapsed time; exits 1 on any violation.
 */
import { chmodSync, copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatReport, soak } from "../tests/faults/soak_lib.ts";

const repo = realpathSync(fileURLToPath(new URL("..", import.meta.url)));
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !(all[i - 1]?.startsWith("--") && all[i - 1] !== "--keep"));
const flag = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const kills = Number(positional[0] ?? 1000);
const seed = Number(positional[1] ?? 1);
const keep = process.argv.includes("--keep");
const root = realpathSync(mkdtempSync(join(tmpdir(), "longrun-soak-")));
// private copies of the executables: a rebuild of dist/ during a long run neither changes them nor fails a spawn (ETXTBSY)
const bin = realpathSync(mkdtempSync(join(tmpdir(), "longrun-soak-bin-")));
copyFileSync(join(repo, "dist", "longrun"), join(bin, "longrun"));
chmodSync(join(bin, "longrun"), 0o755);
if (existsSync(join(repo, "dist", "longrun-crashtest"))) {
  copyFileSync(join(repo, "dist", "longrun-crashtest"), join(bin, "longrun-crashtest"));
  chmodSync(join(bin, "longrun-crashtest"), 0o755);
}
console.log(`soak: ${kills} kills, seed ${seed}, root ${root}`);
let report;
try {
  report = await soak({
    root,
    binary: join(bin, "longrun"),
    crashBinary: join(bin, "longrun-crashtest"),
    kills,
    seed,
    servers: flag("servers", 2) === 1 ? 1 : 2,
    hooks: flag("hooks", 1),
    crashPointRate: flag("crash-rate", 0.3),
    maxViolations: flag("max-violations", 200),
    progressEvery: flag("progress", 25),
    log: (l) => console.log(l),
  });
} finally {
  rmSync(bin, { recursive: true, force: true });
  if (!keep) rmSync(root, { recursive: true, force: true });
  else console.log(`root kept: ${root}`);
}
console.log(formatReport(report, seed));
process.exit(report.violations.length ? 1 : 0);
