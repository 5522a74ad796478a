/**
 * The fast lane (`npm run test:fast`, scripts/test_fast.sh): every test file that runs in the test
 * process only — no compiled binary, no child process (of the binary, of the runtime, of a shell
 * tool), no real Claude Code CLI, no libSQL server, no browser. Membership is decided here by
 * reading the sources, so a new test joins the right lane by itself: a test file is out when it,
 * or a test module it imports (followed through tests/, not into src/), matches a rule of
 * `OUT_OF_PROCESS`. tests/support/lanes.test.ts runs every rule's examples and keeps whole
 * folders (`MUST_BE_FAST`) in the lane.
 *
 * Run as a script, it prints the lane's files, one a line: `bun tests/support/lanes.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** One reason a module does not run in the test process, with sources it must and must not catch. */
export interface LaneRule {
  name: string;
  pattern: RegExp;
  why: string;
  match: string[];
  not_match: string[];
}

/** Names of tests/support modules that start processes, beside helpers that do not (`REPO`, `tempDir`, `until`). */
const MIXED_NAMES = {
  "support/helpers.ts": ["run", "scriptArgv", "holdWriteLock", "canMount"],
  "support/sqld.ts": ["startSqld", "testRoot", "useSqld"],
};

/** The import of any of `names` from a module whose path ends with `module`. */
function importsNames(module: string, names: readonly string[]): RegExp {
  return new RegExp(String.raw`import\s*\{[^}]*\b(?:${names.join("|")})\b[^}]*\}\s*from\s*"[^"]*${module.replace(/[./]/g, "\\$&")}"`);
}

/**
 * What takes a module out of the fast lane. tests/support/helpers.ts and sqld.ts hold in-process
 * helpers too, so they are judged by the names imported from them (a shared fixture that starts
 * sqld only under LONGRUN_TEST_STORE=sqld, as tests/contract/setup.ts does, stays: the fast lane
 * never sets it — so the sqld names are counted in test files only).
 */
export const OUT_OF_PROCESS: LaneRule[] = [
  {
    name: "child process",
    pattern: /["']node:child_process["']|\bBun\.spawn(?:Sync)?\b|\bDeno\.Command\b/,
    why: "starts a process of its own",
    match: [`import { spawn } from "node:child_process";`, `const p = Bun.spawn(["ls"]);`, `new Deno.Command("git")`],
    not_match: [`import { readFileSync } from "node:fs";`, `// spawns nothing`],
  },
  {
    name: "compiled binary",
    pattern: /["'`](?:\.\/)?dist\/longrun|["']dist["'],\s*["']longrun/,
    why: "drives dist/longrun",
    match: [`const BIN = "dist/longrun";`, `run(["./dist/longrun", "demo"])`, `join(REPO, "dist", "longrun")`],
    not_match: [`join(REPO, "dist", "mutation")`, "const exe = `${ROOT}/dist/longrun`; // a path in a sandbox plan"],
  },
  {
    name: "Claude Code CLI",
    pattern: /["']\.bin["'],\s*["']claude["']|node_modules\/\.bin\/claude/,
    why: "runs the real Claude Code CLI",
    match: [`join(REPO, "node_modules", ".bin", "claude")`],
    not_match: [`import { claudeHook } from "../../src/hooks/claude.ts";`],
  },
  {
    name: "browser",
    pattern: /["']playwright(?:-core)?["']/,
    why: "drives a browser",
    match: [`import { chromium } from "playwright-core";`],
    not_match: [`import { Hono } from "hono";`],
  },
  {
    name: "process helper",
    pattern: importsNames("support/helpers.ts", MIXED_NAMES["support/helpers.ts"]),
    why: "starts a child process through tests/support/helpers.ts",
    match: [`import { REPO, run, tempDir } from "../support/helpers.ts";`, `import { scriptArgv } from "./support/helpers.ts";`],
    not_match: [`import { removeDir, tempDir, until } from "../support/helpers.ts";`, `import { runs } from "../support/helpers.ts";`],
  },
];

/** Checked in test files only (see `OUT_OF_PROCESS`). */
export const OUT_OF_PROCESS_TESTS: LaneRule[] = [
  {
    name: "libSQL server",
    pattern: importsNames("support/sqld.ts", MIXED_NAMES["support/sqld.ts"]),
    why: "starts sqld",
    match: [`import { startSqld, sqldMissing } from "../support/sqld.ts";`],
    not_match: [`import { LOCAL_ONLY, TEST_STORE } from "../support/sqld.ts";`],
  },
];

/** Folders whose every test file must be in the fast lane (the mutation run, stryker.config.json, runs tests/core). */
export const MUST_BE_FAST = ["tests/core", "tests/model"];

const inTests = (path: string) => relative(join(REPO, "tests"), path).split("\\").join("/");
const isMixed = (path: string) => inTests(path) in MIXED_NAMES;
/** This module and its test quote what the rules catch, as examples: they are in the lane by name. */
const SELF = new Set(["support/lanes.ts", "support/lanes.test.ts"]);

/** Which rules a module's source breaks (their names). */
export function laneViolations(path: string, source: string): string[] {
  const rules = path.endsWith(".test.ts") ? [...OUT_OF_PROCESS, ...OUT_OF_PROCESS_TESTS] : OUT_OF_PROCESS;
  return rules.filter((r) => r.pattern.test(source)).map((r) => r.name);
}

/** The test modules `source` imports (relative specifiers that land in tests/). */
export function localImports(path: string, source: string): string[] {
  const specs = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.[^"']+)["']/g)].map((m) => resolve(dirname(path), m[1]!));
  return specs.filter((p) => !relative(join(REPO, "tests"), p).startsWith(".."));
}

/** Why a test file is not in the fast lane (`module: rule` for each module of its import closure that breaks a rule), or []. */
export function whyNotFast(file: string, read: (path: string) => string | null = (p) => (existsSync(p) ? readFileSync(p, "utf8") : null)): string[] {
  const seen = new Set<string>();
  const reasons: string[] = [];
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    if (isMixed(path)) return; // judged by the names its importers take (MIXED_NAMES)
    if (SELF.has(inTests(path))) return;
    const source = read(path);
    if (source === null) return;
    for (const v of laneViolations(path, source)) reasons.push(`${relative(REPO, path)}: ${v}`);
    for (const next of localImports(path, source)) visit(next);
  };
  visit(file);
  return reasons;
}

export function testFiles(dir = join(REPO, "tests")): string[] {
  return readdirSync(dir).sort().flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? testFiles(p) : p.endsWith(".test.ts") ? [p] : [];
  });
}

/** The fast lane's test files, relative to the repository (`tests/core/lease.test.ts`, …). */
export function fastLane(): string[] {
  return testFiles().filter((f) => whyNotFast(f).length === 0).map((f) => relative(REPO, f));
}

if (import.meta.main) console.log(fastLane().join("\n"));
