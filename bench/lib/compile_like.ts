/**
 * Builds a reference program for the benchmarks the way scripts/compile.ts builds longrun (one
 * executable, bytecode, CommonJS, minified, no source map, no configuration read from the
 * directory it runs in), so a reference differs from longrun only in the work it does.
 *
 *   node_modules/.bin/bun bench/lib/compile_like.ts ENTRY OUTFILE
 *
 * Skips the build when OUTFILE is newer than ENTRY and every file named in $LONGRUN_BENCH_DEPS
 * (colon-separated). Writes OUTFILE atomically (a temporary name, then a rename).
 */
import { existsSync, renameSync, statSync } from "node:fs";

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  console.error("usage: bun bench/lib/compile_like.ts ENTRY OUTFILE");
  process.exit(2);
}
const deps = [entry, ...(process.env.LONGRUN_BENCH_DEPS ?? "").split(":").filter(Boolean)];
if (existsSync(outfile) && deps.every((d) => statSync(d).mtimeMs <= statSync(outfile).mtimeMs)) process.exit(0);
const tmp = `${outfile}.tmp.${process.pid}`;
const result = await Bun.build({
  entrypoints: [entry],
  compile: { outfile: tmp, autoloadDotenv: false, autoloadBunfig: false, autoloadTsconfig: false, autoloadPackageJson: false },
  minify: true,
  bytecode: true,
  format: "cjs",
  sourcemap: "none",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
renameSync(tmp, outfile);
