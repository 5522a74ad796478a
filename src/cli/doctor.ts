/**
 * `longrun doctor [--root DIR] [--json]`: which of longrun's protections the operating system
 * enforces right now for DIR (Claude Code's sandbox), and which rest on the hook's parsing; whether
 * the hooks' program answers `--version` and lies in a place that lasts; the HTTP server's token
 * files (there, 0600); this longrun's version. It gathers the facts here (PATH, a bubblewrap probe,
 * the root's settings.local.json, the hooks' program, the token files, Landlock) and leaves the
 * judgement to src/cli/doctor_report.ts. It creates nothing.
 * Exit 0 when every protection is OS-enforced and every other check passed, 1 otherwise, 2 on a
 * usage error.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CLAUDE_EVENTS } from "../hooks/claude.ts";
import { osSandboxFacts, protectedPaths, stableExePath, unstableExeReason } from "../hooks/install.ts";
import { InvalidRootError, resolveRoot, rootPaths } from "../root/root.ts";
import { runtimeKey } from "../runtime/index.ts";
import { buildInfo, VERSION } from "../version.ts";
import { type DoctorFacts, doctorReport, type ProgramFacts, readHooks, readSandbox, type TokenFileFacts } from "./doctor_report.ts";

/** The variables that name token files for `longrun http` (src/http/token_files.ts reads them). */
const TOKEN_FILE_VARIABLES = ["LONGRUN_HOST_TOKEN_FILE", "LONGRUN_AGENT_TOKEN_FILE", "LONGRUN_METRICS_TOKEN_FILE"];

/** The program's facts; install's own lasting copy (`stableExePath`) lasts by definition, wherever HOME is. */
function program(path: string, env: Record<string, string | undefined>): ProgramFacts {
  const unstable = path === stableExePath(env) ? null : unstableExeReason(path);
  try {
    if (!statSync(path).isFile()) return { path, exists: true, executable: false, unstable };
  } catch {
    return { path, exists: false, executable: false, unstable };
  }
  try {
    accessSync(path, constants.X_OK);
    return { path, exists: true, executable: true, unstable };
  } catch {
    return { path, exists: true, executable: false, unstable };
  }
}

/** The first line `exe --version` prints when it answers as longrun does (exit 0, "longrun …"), else null. */
function versionOf(exe: string): string | null {
  const r = spawnSync(exe, ["--version"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] });
  const first = typeof r.stdout === "string" ? r.stdout.split("\n")[0]!.trim() : "";
  return r.status === 0 && /^longrun \S/.test(first) ? first : null;
}

function tokenFile(source: string, path: string): TokenFileFacts {
  try {
    return { source, path, exists: true, mode: statSync(path).mode };
  } catch (e) {
    return { source, path, exists: (e as { code?: string }).code !== "ENOENT", mode: null };
  }
}

/** The root's http.json when it is there, and every file a token variable names. */
function tokenFiles(root: string, env: Record<string, string | undefined>): TokenFileFacts[] {
  const out: TokenFileFacts[] = [];
  const http = join(rootPaths(root).longrun, "http.json");
  const own = tokenFile(".longrun/http.json", http);
  if (own.exists) out.push(own);
  for (const v of TOKEN_FILE_VARIABLES) if (env[v]) out.push(tokenFile(v, env[v]!));
  return out;
}

function readSettings(file: string): { settings: unknown; error: string | null } {
  try {
    return { settings: JSON.parse(readFileSync(file, "utf8")), error: null };
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return { settings: {}, error: null };
    return { settings: {}, error: (e as Error).message };
  }
}

/**
 * The Landlock ABI version the kernel offers (`landlock_create_ruleset(NULL, 0,
 * LANDLOCK_CREATE_RULESET_VERSION)`, syscall 444), through `bun:ffi`: null when there is none or it
 * cannot be asked; undefined where it is not looked up (not Linux, not Bun).
 */
function landlockAbi(): number | null | undefined {
  if (process.platform !== "linux" || runtimeKey() !== "bun" || !["x64", "arm64"].includes(process.arch)) return undefined;
  try {
    const ffi = require("bun:ffi") as typeof import("bun:ffi");
    for (const libc of ["libc.so.6", `libc.musl-${process.arch === "x64" ? "x86_64" : "aarch64"}.so.1`]) {
      let lib;
      try {
        lib = ffi.dlopen(libc, { syscall: { args: [ffi.FFIType.i64, ffi.FFIType.i64, ffi.FFIType.i64, ffi.FFIType.i64], returns: ffi.FFIType.i64 } });
      } catch {
        continue;
      }
      try {
        const v = Number(lib.symbols.syscall(444, 0, 0, 1));
        return v > 0 ? v : null;
      } finally {
        lib.close();
      }
    }
  } catch {
    // no FFI here
  }
  return null;
}

export function gatherDoctorFacts(root: string, env: Record<string, string | undefined> = process.env): DoctorFacts {
  const os = osSandboxFacts(env);
  const settingsFile = join(root, ".claude", "settings.local.json");
  const { settings, error } = readSettings(settingsFile);
  const hooks = readHooks(settings, root, CLAUDE_EVENTS);
  // the executable install denies to sandboxed commands: the one program the hooks run, when it is a compiled longrun
  const exe = hooks.direct.length === 1 ? hooks.direct[0]! : null;
  return {
    root,
    home: homedir(),
    platform: os.platform,
    bwrap: { path: os.bwrap, works: os.bwrapWorks, error: os.bwrapError },
    socat: os.socat,
    settingsFile,
    settingsError: error,
    hooks,
    programs: hooks.programs.map((p) => ({ ...program(p, env), ...(hooks.direct.includes(p) ? { version: versionOf(p) } : {}) })),
    sandbox: readSandbox(settings),
    paths: protectedPaths(root, exe),
    landlockAbi: landlockAbi(),
    version: `longrun ${VERSION} (${buildInfo().target}, commit ${buildInfo().commit})`,
    tokens: tokenFiles(root, env),
  };
}

export function runDoctor(options: { root: string | null; json: boolean }): number {
  let root: string;
  try {
    root = resolveRoot(options.root ?? process.cwd());
  } catch (e) {
    if (!(e instanceof InvalidRootError)) throw e;
    process.stderr.write(`longrun: ${e.message}\n`);
    return 2;
  }
  const report = doctorReport(gatherDoctorFacts(root));
  if (options.json) {
    const { lines: _lines, ...rest } = report;
    process.stdout.write(JSON.stringify(rest) + "\n");
  } else process.stdout.write(report.lines.join("\n") + "\n");
  return report.ok ? 0 : 1;
}

/** `longrun doctor` with its own arguments: `--root DIR`, `--json`. */
export function runDoctorCommand(args: string[]): number {
  let values: { root?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args, options: { root: { type: "string" }, json: { type: "boolean" } }, allowPositionals: false, strict: true }));
  } catch (e) {
    process.stderr.write(`longrun: ${(e as Error).message}; usage: longrun doctor [--root DIR] [--json]\n`);
    return 2;
  }
  return runDoctor({ root: values.root ?? null, json: values.json === true });
}
