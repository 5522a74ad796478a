/**
 * What the real-client tests share: a temp project where `longrun hook install claude` ran, the
 * calls a scripted model makes, and whether the client can run here at all.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO, removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";
import { claudeBinary, describeRun, runClaude, type ClaudeRun, type RunClaudeOptions } from "./claude.ts";
import type { Step, ToolCall } from "./messages_server.ts";

const CI = process.env.CI === "true";
export const probe = claudeBinary();
/** Why these tests are skipped here, or false; never skipped under CI=true (there a client that cannot run fails). */
export const skip: string | false = !probe.bin && !CI ? probe.reason : false;
if (skip) console.warn(`tests/claude_code: skipping the real-client tests: ${skip}`);

export const LONGRUN = process.env.LONGRUN_CLAUDE_TEST_BINARY || BINARY;
export const SECRET = "SECRET-HOST-TOKEN-4f1c";
export const T = { timeout: 120_000 };

/** dist/longrun, built when missing (as npm test does first). */
export function ensureBinary(): void {
  if (!probe.bin) throw new Error(probe.reason);
  if (existsSync(LONGRUN)) return;
  mkdirSync(join(REPO, "dist"), { recursive: true });
  const tmp = join(REPO, "dist", `longrun.tmp.${process.pid}`);
  execFileSync(join(REPO, "node_modules", ".bin", "bun"), ["scripts/compile.ts", tmp], { cwd: REPO, stdio: "inherit" });
  renameSync(tmp, LONGRUN);
}

export interface Project {
  root: string;
  home: string;
  /** runClaude in this project (cwd root, HOME home). */
  claude(o: Omit<RunClaudeOptions, "cwd" | "home">): Promise<ClaudeRun>;
  settingsFile: string;
}

const made: string[] = [];

/** Removes what project(), cleanUp() and victim roots made; each test file registers it with its own afterEach. */
export function removeMade(): void {
  for (const d of made.splice(0)) removeDir(d);
}

/** A temp root with `longrun hook install claude` run in it (HOME a temp dir too). */
export async function project(exe = LONGRUN, root = tempDir("longrun-cc-root-")): Promise<Project> {
  const home = tempDir("longrun-cc-home-");
  made.push(root, home);
  const r = await run([exe, "hook", "install", "claude", "--root", root], { env: { HOME: home, XDG_DATA_HOME: "" } }); // a binary in a build or temp dir is copied under HOME
  assert.equal(r.code, 0, `hook install: ${r.stdout}${r.stderr}`);
  return { root, home, settingsFile: join(root, ".claude", "settings.local.json"), claude: (o) => runClaude({ cwd: root, home, ...o }) };
}

/** A project with a task in it (the user approved once) and SECRET in http.json; with `memoryMark`, also a memory holding it. */
export async function victim(memoryMark?: string): Promise<Project> {
  const p = await project();
  const r = await p.claude({ prompt: "/approve set up", permissionMode: "acceptEdits", steps: [done] });
  assert.equal(r.code, 0, describeRun(r));
  writeFileSync(join(p.root, ".longrun", "http.json"), JSON.stringify({ host_token: SECRET, agent_token: SECRET }), { mode: 0o600 });
  if (memoryMark !== undefined) {
    const saved = await run([LONGRUN, "serve", "--root", p.root], { input: `{"jsonrpc":"2.0","id":1,"method":"memory.save","params":{"type":"note","title":"note","content":"${memoryMark}"}}\n` });
    assert.match(saved.stdout, /"result"/, saved.stdout + saved.stderr);
  }
  return p;
}

/** The project's task as `longrun serve` reports it (task.status). */
export async function status(p: Project): Promise<{ access_mode: string; turn_index: number; lease: { reason: string } | null }> {
  const r = await run([LONGRUN, "serve", "--root", p.root], { input: '{"jsonrpc":"2.0","id":1,"method":"task.status","params":{}}\n' });
  return JSON.parse(r.stdout).result.task;
}

/** Removes a directory when the current test ends. */
export function cleanUp(dir: string): string {
  made.push(dir);
  return dir;
}

export const write = (file: string, content = "hello\n"): ToolCall => ({ tool: "Write", input: { file_path: file, content } });
export const bash = (command: string): ToolCall => ({ tool: "Bash", input: { command, description: "run a command" } });
export const read = (file: string): ToolCall => ({ tool: "Read", input: { file_path: file } });
export const done: Step = { text: "All done." };
