/**
 * A person at a terminal as the host of one root (`longrun start|list|grant|revoke`): the root is
 * `--root DIR` (default: the working directory) or a project on a libSQL server (`--store`), and
 * every call goes through the same dispatcher and method definitions as `longrun serve`'s, host
 * side, `via: "cli"` (so a grant records `granted_by: "host:cli"`). Every failure is one line on
 * stderr and exit 2; with `--json` the error is also one JSON object on stdout.
 */
import { existsSync } from "node:fs";
import { Dispatcher } from "../../rpc/dispatcher.ts";
import type { ErrorObject } from "../../rpc/errors.ts";
import type { Caller } from "../../rpc/method.ts";
import { allMethods } from "../../rpc/methods/index.ts";
import { RootRegistry } from "../../root/registry.ts";
import { InvalidRootError, resolveRoot, rootPaths } from "../../root/root.ts";
import type { ServerStore } from "../../store/server_config.ts";
import { oneLine } from "../human.ts";

/** Who a person's calls are made as: the host, through the command line. */
export const PERSON: Caller = { side: "host", via: "cli" };

/** Where the command runs and how it answers. */
export interface PersonTarget {
  root: string | null;
  server: ServerStore | null;
  json: boolean;
}

/** A refusal to show a person: one line, and the error object when there is one. */
export class PersonError extends Error {
  constructor(message: string, readonly error: ErrorObject | null = null) {
    super(message.split("\n")[0]!);
    this.name = "PersonError";
  }
}

/** One root, opened for one command; `call` runs a method as the host and gives its result or throws `PersonError`. */
export interface PersonSession {
  /** The root's real path, or the server project's name. */
  where: string;
  call<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>): Promise<T>;
}

/**
 * The agent's or the user's words as a terminal may show them: control characters (an escape
 * sequence that would clear the screen or fake a line, a carriage return, a newline) and the
 * bidirectional overrides that reorder what is read are written as escapes, never sent raw.
 * @example shown("ok\u001b[2Japproved") === "ok\\x1b[2Japproved"
 */
export function shown(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const n = c.codePointAt(0)!;
    return n < 0x100 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
  });
}

/** Prints a failure as one line (and, with --json, as an object on stdout); exit 2. */
export function fail(t: PersonTarget, verb: string, e: unknown): number {
  const message = e instanceof PersonError ? e.message : oneLine(e);
  process.stderr.write(`longrun: ${verb}: ${message}\n`);
  if (t.json) {
    // a protocol error keeps its kind and code; the command's own refusals are "refused", anything else "internal"
    const err = e instanceof PersonError ? (e.error ? { kind: e.error.data?.kind ?? "internal", code: e.error.code, message } : { kind: "refused", message }) : { kind: "internal", message };
    process.stdout.write(JSON.stringify({ ok: false, error: err }) + "\n");
  }
  return 2;
}

/**
 * Opens the root of `t` for one command and runs `fn` with it. A local directory that holds no
 * longrun root is refused without creating anything, unless `create` (a task.start makes one).
 */
export async function asPerson(verb: string, t: PersonTarget, create: boolean, fn: (s: PersonSession) => Promise<number>): Promise<number> {
  let dir: string | null = null;
  try {
    if (!t.server) dir = resolveRoot(t.root ?? process.cwd());
  } catch (e) {
    if (!(e instanceof InvalidRootError)) throw e;
    return fail(t, verb, new PersonError(e.message));
  }
  if (dir !== null && !create && !existsSync(rootPaths(dir).longrun) && !existsSync(rootPaths(dir).memoryDb)) {
    return fail(t, verb, new PersonError(`no longrun root in ${dir} (nothing was created); run it in the project's directory or pass --root DIR (\`longrun start "what to do"\` begins one)`));
  }
  const roots = new RootRegistry({ defaultRoot: dir, allow: dir ? [dir] : null, server: t.server, rootOptions: { searchInWorker: false } });
  const dispatcher = new Dispatcher({ methods: allMethods(), roots });
  let id = 0;
  const session: PersonSession = {
    where: roots.defaultRoot ?? "",
    async call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
      const answer = await dispatcher.handleMessage({ jsonrpc: "2.0", id: ++id, method, params }, PERSON);
      const one = Array.isArray(answer) ? answer[0] : answer;
      if (!one) throw new PersonError(`${method} gave no answer`);
      if ("error" in one) throw new PersonError(one.error.message, one.error);
      return one.result as T;
    },
  };
  try {
    return await fn(session);
  } catch (e) {
    return fail(t, verb, e);
  } finally {
    await dispatcher.drained();
    await roots.closeAll();
  }
}

/** Prints `value` as one JSON line (for --json). */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + "\n");
}
