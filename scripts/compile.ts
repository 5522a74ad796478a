/**
 * Builds the single executable with Bun: src/main.ts plus the memory Worker as a second entry
 * point, and libSQL's native module embedded.
 *
 *   bun scripts/compile.ts [OUTFILE] [--target NAME] [--crash-points]
 *
 * NAME is one of scripts/targets.ts (linux-x64, linux-arm64, linux-x64-musl, linux-arm64-musl,
 * darwin-x64, darwin-arm64, windows-x64); the default is this machine. For another platform,
 * Bun's runtime (`@oven/bun-*`) and libSQL's native module (`@libsql/*`) for it are fetched once
 * with `npm pack` at the versions package-lock.json pins (scripts/targets.ts).
 *
 * `libsql` picks its native package with a dynamic `require(\`@libsql/${target}\`)` that the
 * bundler cannot follow; this build replaces that function with one that loads the target's
 * `index.node`, embedded as a plain file, through src/runtime/bun/native.ts, which writes it once
 * to a cache directory it can load from (not to $TMPDIR on every start, as Bun does on its own).
 */
import type { BunPlugin } from "bun";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bunExecutable, hostTarget, libsqlNativeModule, REPO, targetByName } from "./targets.ts";

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const v = process.argv[i + 1];
  if (!v || v.startsWith("--")) throw new Error(`${name} needs a value`);
  return v;
}

/**
 * The commit the executable is built from (`+dirty` with uncommitted changes), or "unknown";
 * LONGRUN_COMMIT overrides it (a build without .git, such as the Dockerfile's).
 */
export function gitCommit(): string {
  const given = process.env.LONGRUN_COMMIT;
  if (given) {
    if (!/^[0-9A-Za-z._+-]{1,64}$/.test(given)) throw new Error(`LONGRUN_COMMIT must be a commit id (up to 64 of 0-9 A-Z a-z . _ + -), got ${JSON.stringify(given)}`);
    return given;
  }
  const head = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: REPO, encoding: "utf8" });
  if (head.status !== 0) return "unknown";
  const dirty = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: REPO, encoding: "utf8" });
  return head.stdout.trim() + (dirty.status === 0 && dirty.stdout.trim() !== "" ? "+dirty" : "");
}

/** The JIT tier-up scale the executable starts with (see `compile` below and src/main.ts). */
export const HOOK_JIT_POLICY = 100;

export interface CompileOptions {
  outfile: string;
  target?: string;
  crashPoints?: boolean;
  commit?: string;
  log?: (s: string) => void;
}

export async function compile(options: CompileOptions): Promise<{ outfile: string; target: string; seconds: number }> {
  const t0 = performance.now();
  const log = options.log ?? ((s: string) => console.log(s));
  const target = options.target ? targetByName(options.target) : hostTarget();
  const nativeModule = libsqlNativeModule(target, log);
  const executablePath = bunExecutable(target, log);
  const nativeBytes = readFileSync(nativeModule);
  const native = { sha256: createHash("sha256").update(nativeBytes).digest("hex"), size: nativeBytes.length };
  const loader = join(REPO, "src", "runtime", "bun", "native.ts");

  const REQUIRE_NATIVE = /function requireNative\(\) \{[\s\S]*?return require\(`@libsql\/\$\{target\}`\);\n\}/;
  const embedLibsql: BunPlugin = {
    name: "embed-libsql-native",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/]index\.js$/ }, async (args) => {
        const src = await Bun.file(args.path).text();
        if (!REQUIRE_NATIVE.test(src)) {
          throw new Error(`compile: ${args.path} no longer has the requireNative() this build replaces; update scripts/compile.ts`);
        }
        return { contents: src.replace(REQUIRE_NATIVE, 'function requireNative() {\n  return require("longrun:libsql-native").default;\n}'), loader: "js" };
      });
      build.onResolve({ filter: /^longrun:libsql-native$/ }, () => ({ path: "libsql-native", namespace: "longrun" }));
      build.onLoad({ filter: /^libsql-native$/, namespace: "longrun" }, () => ({
        contents: [
          `import embedded from ${JSON.stringify(nativeModule)} with { type: "file" };`,
          `import { loadEmbeddedNative } from ${JSON.stringify(loader)};`,
          `export default loadEmbeddedNative({ embedded, sha256: ${JSON.stringify(native.sha256)}, size: ${native.size} });`,
        ].join("\n"),
        loader: "js",
      }));
    },
  };

  // The shipped build has crash points compiled out; `--crash-points` keeps them for the crash tests.
  const build = options.crashPoints ? "crashtest" : "release";
  const commit = options.commit ?? gitCommit();
  const result = await Bun.build({
    // the entry; the bundles runtime/load.ts loads (a hook loads its own, small, and the gate's
    // decision (hooks/event_run) only when no resident gate answers; the root, the installer,
    // the resident gate or libSQL's web client only when it needs them); the Workers
    entrypoints: ["src/main.ts", "src/hooks/command.ts", "src/cli/main.ts", "src/root/root.ts", "src/hooks/install.ts", "src/db/remote.ts", "src/memory/worker.ts", "src/db/writer_worker.ts", "src/hooks/watchdog.ts", "src/hooks/event_run.ts", "src/hooks/gate_server.ts", "src/hooks/gate_watchdog.ts"].map((e) => join(REPO, e)),
    root: join(REPO, "src"),
    // the executable reads no configuration from the directory it runs in: a bunfig.toml (its
    // preload runs code before longrun's), a .env (variables that move the store or the boundary),
    // a tsconfig.json or package.json there is the project's, which an agent writes under a lease
    //
    // JavaScriptCore's tier-up thresholds start 100 times higher (jitPolicy): a hook is a process
    // per tool call, over in milliseconds, and compiling its run-once code cost it more than it
    // saved (measured: a quarter of its CPU, ~90 context switches waking the JIT threads); code
    // that runs long still tiers up. src/main.ts puts every other command back on the normal
    // policy at once; Workers start with the normal policy on their own.
    compile: {
      outfile: options.outfile,
      target: target.bun,
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
      jitPolicy: HOOK_JIT_POLICY,
      ...(executablePath ? { executablePath } : {}),
    },
    minify: true,
    bytecode: true,
    format: "cjs",
    sourcemap: "none",
    define: {
      "process.env.LONGRUN_BUILD": JSON.stringify(build),
      "process.env.LONGRUN_BUILD_TARGET": JSON.stringify(target.name),
      "process.env.LONGRUN_BUILD_COMMIT": JSON.stringify(commit),
    },
    plugins: [embedLibsql],
  });
  if (!result.success) {
    for (const l of result.logs) console.error(l);
    throw new Error(`compile: building ${options.outfile} for ${target.name} failed`);
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`built ${options.outfile} (${build}, ${target.name}, ${commit}) in ${seconds.toFixed(1)} s`);
  return { outfile: options.outfile, target: target.name, seconds };
}

if (import.meta.main) {
  const outfile = process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "dist/longrun";
  try {
    await compile({ outfile, target: option("--target"), crashPoints: process.argv.includes("--crash-points") });
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}
