/**
 * The architecture, enforced: the core (src/core) imports nothing but other core files, and
 * touches no runtime (no Bun, Deno, process, node: modules) and no I/O.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { REPO } from "./support/helpers.ts";

const CORE = join(REPO, "src", "core");

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Problems with one core file's source; exported logic is tested on a bad sample below. */
export function coreViolations(file: string, source: string): string[] {
  const problems: string[] = [];
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']/gms),
    ...source.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ...source.matchAll(/\brequire\s*\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
  for (const spec of specifiers) {
    if (!spec.startsWith(".")) {
      problems.push(`imports a package or runtime module: ${spec}`);
      continue;
    }
    const target = resolve(dirname(file), spec);
    if (relative(CORE, target).startsWith("..")) problems.push(`imports outside the core: ${spec}`);
  }
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  for (const global of ["Bun", "Deno", "process", "require", "fetch", "setTimeout", "Worker"]) {
    if (new RegExp(`\\b${global}\\b\\s*[.(]`).test(code)) problems.push(`uses the runtime global ${global}`);
  }
  return problems;
}

describe("layering", () => {
  test("the checker itself flags runtime imports, edge imports and runtime globals", () => {
    const f = join(CORE, "x.ts");
    assert.equal(coreViolations(f, `import { readFileSync } from "node:fs";`).length, 1);
    assert.equal(coreViolations(f, `import { Root } from "../root.ts";`).length, 1);
    assert.equal(coreViolations(f, `const x = Bun.file("a");`).length, 1);
    assert.equal(coreViolations(f, `const m = await import("../memory/db.ts");`).length, 1);
    assert.equal(coreViolations(f, `import { a } from "./lease.ts";`).length, 0);
  });

  const files = filesUnder(CORE);
  test("the core has files to check", () => assert.ok(files.length >= 5));
  for (const file of files) {
    test(`core file ${relative(REPO, file)} imports no runtime module and no edge`, () => {
      assert.deepEqual(coreViolations(file, readFileSync(file, "utf8")), []);
    });
  }
});

/** Files reachable from `entry` through static imports only (dynamic imports load on demand). */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith(".ts")) continue;
    const src = readFileSync(file, "utf8");
    for (const m of src.matchAll(/^\s*(?:import|export)\s(?!type\b)[^;]*?from\s+["']([^"']+)["']/gms)) {
      const spec = m[1]!;
      stack.push(spec.startsWith(".") ? resolve(dirname(file), spec) : `pkg:${spec}`);
    }
  }
  return seen;
}

describe("the per-event hook path", () => {
  test("the hook command imports nothing that decides: a call the resident gate answers evaluates next to nothing", () => {
    const reach = [...staticClosure(join(REPO, "src", "hooks", "command.ts"))];
    assert.deepEqual(reach.filter((f) => /src\/(store|db|core\/contract)\//.test(f) || f.endsWith("src/hooks/claude.ts") || f.endsWith("src/hooks/tools.ts")), []);
  });
  test("nothing the hook's decision imports statically reaches libSQL, the memory layer or the Worker", () => {
    const reach = [...staticClosure(join(REPO, "src", "hooks", "event_run.ts"))];
    assert.ok(reach.some((f) => f.endsWith("src/store/state_db.ts")), "the closure is computed");
    assert.deepEqual(reach.filter((f) => f.includes("src/memory/") || /src\/db\/(database|local|writer_)/.test(f) || f.includes("src/root/root.ts") || f.startsWith("pkg:@libsql")), []);
  });
  test("the check can fail: the serve command reaches libSQL", () => {
    const reach = [...staticClosure(join(REPO, "src", "cli", "serve.ts"))];
    assert.ok(reach.some((f) => f === "pkg:libsql"));
  });
});

describe("the status page (src/http/page)", () => {
  const PAGE = join(REPO, "src", "http", "page");
  /** Import specifiers of a file that bring code at run time (`import type` brings none). */
  const runtimeImports = (file: string) =>
    [...readFileSync(file, "utf8").matchAll(/^\s*import\s(?!type\b)[^;]*?from\s+["']([^"']+)["']/gms)].map((m) => resolve(dirname(file), m[1]!));

  test("the browser script imports nothing at run time: it is served from its own text", () => {
    for (const f of ["client.ts", "client_views.ts"]) assert.deepEqual(runtimeImports(join(PAGE, f)), [], f);
  });
  test("the page reads and acts only through the dispatcher: no store, memory, ledger or root imported for running code", () => {
    const below = ["store", "memory", "ledger", "db"].map((d) => join(REPO, "src", d) + "/");
    for (const file of filesUnder(PAGE)) {
      const bad = runtimeImports(file).filter((t) => below.some((b) => t.startsWith(b)) || t.endsWith("/src/root/root.ts") || t.endsWith("/src/root/registry.ts"));
      assert.deepEqual(bad, [], relative(REPO, file));
    }
  });
  test("the check can fail: the HTTP command imports the root registry", () => {
    assert.ok(runtimeImports(join(REPO, "src", "cli", "http.ts")).some((t) => t.endsWith("/src/root/registry.ts")));
  });
});
