/**
 * Builds the single executable with Bun: src/main.ts plus the memory Worker as a second entry
 * point, and libSQL's native module embedded. `libsql` picks its native package with a dynamic
 * `require(\`@libsql/${target}\`)` that the bundler cannot follow; this build rewrites it to a
 * static require of this platform's `index.node`, which `bun build --compile` then embeds.
 */
import type { BunPlugin } from "bun";
import { existsSync } from "node:fs";

const target = `${process.platform}-${process.arch}${process.platform === "linux" ? "-gnu" : ""}`;
const nativeModule = `@libsql/${target}/index.node`;
if (!existsSync(`node_modules/${nativeModule}`)) {
  console.error(`compile: node_modules/${nativeModule} is missing; run npm ci on this platform first`);
  process.exit(1);
}

const DYNAMIC_REQUIRE = "return require(`@libsql/${target}`);";

const embedLibsql: BunPlugin = {
  name: "embed-libsql-native",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/]index\.js$/ }, async (args) => {
      const src = await Bun.file(args.path).text();
      if (!src.includes(DYNAMIC_REQUIRE)) {
        throw new Error(`compile: ${args.path} no longer has the dynamic require this build rewrites; update scripts/compile.ts`);
      }
      return { contents: src.replace(DYNAMIC_REQUIRE, `return require(${JSON.stringify(nativeModule)});`), loader: "js" };
    });
  },
};

const outfile = process.argv[2] ?? "dist/longrun";
// The shipped build has crash points compiled out; `--crash-points` keeps them for the crash tests.
const build = process.argv.includes("--crash-points") ? "crashtest" : "release";
const result = await Bun.build({
  // the entry; the bundles runtime/load.ts loads (a hook loads its own, and the root or the
  // installer only when it needs them); the Workers
  entrypoints: ["src/main.ts", "src/hooks/command.ts", "src/cli/main.ts", "src/root.ts", "src/hooks/install.ts", "src/memory/worker.ts", "src/memory/writer_worker.ts"],
  compile: { outfile },
  minify: true,
  bytecode: true,
  format: "cjs",
  sourcemap: "none",
  define: { "process.env.LONGRUN_BUILD": JSON.stringify(build) },
  plugins: [embedLibsql],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${outfile} (${build})`);
