/**
 * Renders the reference tables of docs/ from the code that decides them, between markers:
 *
 *   <!-- generated:errors -->
 *   …the table…
 *   <!-- /generated:errors -->
 *
 * Run `bun scripts/gen_docs.ts` after changing a table's source; `tests/docs.test.ts` fails when a
 * checked-in table differs from what this renders. The text around the markers is written by hand.
 * Each table renders from the exported table it documents and tolerates rows that gain fields.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as errorsModule from "../src/core/errors.ts";
import * as limitsModule from "../src/core/limits.ts";
import * as protectModule from "../src/hooks/protect.ts";
import * as programsModule from "../src/hooks/readonly_programs.ts";
import * as toolsModule from "../src/hooks/tool_table.ts";
import { Dispatcher } from "../src/rpc/dispatcher.ts";
import * as rpcErrors from "../src/rpc/errors.ts";
import { allMethods } from "../src/rpc/methods/index.ts";

export const REPO = fileURLToPath(new URL("..", import.meta.url));

type Row = Record<string, unknown>;

/** A table cell: one line, pipes escaped. */
function cell(s: unknown): string {
  return String(s ?? "").replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");
}

function code(s: string): string {
  return s.includes("`") ? `\`\` ${s} \`\`` : `\`${s}\``;
}

/** A Markdown table; an `examples` column no row fills yet is left out. */
function table(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const drop = head.map((h, i) => h === "examples" && rows.every((r) => !r[i]));
  if (drop.some(Boolean)) return table(head.filter((_, i) => !drop[i]), rows.map((r) => r.filter((_, i) => !drop[i])));
  return [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`)].join("\n");
}

const fmt = (n: number) => n.toLocaleString("en-US");

// ---------------------------------------------------------------------------------------------
// Methods: from the dispatcher's own system.describe.

/** The seeds' invariant numbers in a few summaries, in the words users read. */
const RULE_NAMES: Record<string, string> = { I1: "search first", I2: "saved before shown", I3: "one turn's lease" };

function paramsOf(schema: unknown): string {
  const s = (schema ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  const required = new Set(s.required ?? []);
  const names = Object.keys(s.properties ?? {}).filter((n) => n !== "root");
  return names.map((n) => code(required.has(n) ? n : `${n}?`)).join(", ") || "none";
}

export function renderMethods(): string {
  const dispatcher = new Dispatcher({ methods: allMethods(), roots: { defaultRoot: null } as never });
  const described = dispatcher.describe({ side: "host", via: "docs" }) as { methods: Row[] };
  const rows = described.methods.map((m) => {
    const summary = String(m.summary ?? "").replace(/^(I[1-4]): /, (all, id: string) => (RULE_NAMES[id] ? `${RULE_NAMES[id]}: ` : all));
    return [code(String(m.name)), String(m.side), m.read_only ? "yes" : "no", paramsOf(m.params), summary];
  });
  return table(["method", "side", "read-only", "params (every method also takes `root?`)", "does"], rows);
}

// ---------------------------------------------------------------------------------------------
// Errors: every kind with its code (src/core/errors.ts) and HTTP status (src/rpc/errors.ts).

/** When each error is raised, for people; a row of the code's table may carry its own (`when`). */
const WHEN: Record<string, string> = {
  parse_error: "not JSON, or not UTF-8 (id null)",
  invalid_request: "not a JSON-RPC request; an empty batch",
  method_not_found: "unknown method",
  invalid_params:
    "params fail their schema (`data.issues`), or a bad `root` (`data.field: \"root\"`), or a string longrun could not give back exactly (a NUL character, an unpaired surrogate) or an integer beyond ±(2^53-1) (`data.field`)",
  internal: "an unexpected failure; check `task.status` before retrying",
  write_gate_violation: "read-only, stale lease, out of scope, expired, uses exhausted (`data.reason`, `data.lease_turn`, `data.turn`)",
  transition_error: "not in the whitelist (`data.from`, `data.to`, `data.allowed`)",
  checkpoint_write_error:
    "the memory save failed, whatever the cause (also when memory.db is gone or locked before the checkpoint could begin: `data.storage`); no text returned; the lease has ended (`data.pending_kept`, `data.lease_revoked`: whether the database itself recorded the end); `data.pending_path`",
  state_corrupt: "the task's state cannot be read (`data.path`); never treated as \"no task\"; `task.recover` always has a way out",
  no_active_task: "a task method with no task, or a turn, resume, grant or request on a finished one",
  stale_epoch: "a run write with an old fencing epoch (`data.current_epoch`)",
  budget_exhausted: "a new effect or charge past a limit (`data.exhausted_by`)",
  unauthorized: "the caller's side may not call this; a tool or source outside a run's authorization",
  limit_exceeded: "over a documented limit (`data.field`, `limit`, `actual`, `unit`); nothing written",
  conflict: "state changed underneath (CAS lost), a task already active, recovery over a readable state, a receipt not in a state for this",
  not_found: "unknown id or ref",
  storage_error:
    "the disk is full, the root is read-only, an I/O error, or memory's file is gone or replaced (`data.reason`: `disk_full`, `read_only`, `io`, `missing`; `data.path`); nothing claimed saved",
  memory_corrupt: "`memory.db` is not a readable database (truncated, overwritten); `data.path`; see [Reliability](reliability.md)",
  content_missing:
    "the stored body of one artifact version, attachment or context is gone or no longer matches its sha256 (`data.item`, `data.path`, `data.reason`: `missing`, `mismatch`); the task and everything else are intact",
  idempotency_conflict:
    "an `idempotency_key` already used (within its 24 hours) for another method or other params (`data.key`, `data.method`, `data.first_method`); nothing was done",
};

export interface ErrorRow {
  code: number;
  kind: string;
  when: string;
  http: number;
}

/** An exported table as [key, row] pairs, whether it is a record or an array of rows with `kind`. */
function entriesOf(table: unknown): [string, unknown][] {
  if (Array.isArray(table)) return table.map((r) => [String((r as Row).kind), r]);
  return table && typeof table === "object" ? Object.entries(table as Row) : [];
}

/**
 * The wire's error kinds: the protocol's own (`PROTOCOL_ERRORS` when it exists, else the codes of
 * src/rpc/errors.ts), then the contract's (`ERRORS` when it exists, else `ERROR_CODES`).
 */
export function errorRows(): ErrorRow[] {
  const mod = errorsModule as unknown as Record<string, unknown>;
  const rpc = rpcErrors as unknown as Record<string, unknown>;
  const httpOf = (kind: string): number => (typeof rpc.httpStatusOf === "function" ? (rpc.httpStatusOf as (k: string) => number)(kind) : 500);
  const protocol: [string, unknown][] = mod.PROTOCOL_ERRORS
    ? entriesOf(mod.PROTOCOL_ERRORS)
    : [
        ["parse_error", rpc.PARSE_ERROR],
        ["invalid_request", rpc.INVALID_REQUEST],
        ["method_not_found", rpc.METHOD_NOT_FOUND],
        ["invalid_params", rpc.INVALID_PARAMS],
        ["internal", rpc.INTERNAL_ERROR],
      ];
  const rows = new Map<string, ErrorRow>();
  for (const [kind, value] of [...protocol, ...entriesOf(mod.ERRORS ?? mod.ERROR_CODES)]) {
    const row = (typeof value === "object" && value !== null ? value : {}) as Row;
    const c = typeof value === "number" ? value : Number(row.code);
    if (!Number.isFinite(c)) continue;
    const own = [row.when, row.doc, row.description].find((w) => typeof w === "string") as string | undefined;
    const when = own ?? WHEN[kind] ?? (typeof row.means === "string" ? row.means : "");
    const http = typeof row.http === "number" ? row.http : typeof row.status === "number" ? row.status : httpOf(kind);
    rows.set(kind, { code: c, kind, when, http });
  }
  return [...rows.values()];
}

/** The write gate's reasons (`GATE_REASONS`, each with what it means and an example), when the code exports them. */
export function renderGateReasons(): string {
  const reasons = entriesOf((errorsModule as unknown as Record<string, unknown>).GATE_REASONS);
  if (reasons.length === 0) return "(src/core/errors.ts exports no GATE_REASONS table)";
  return table(["`data.reason`", "means", "example"], reasons.map(([r, v]) => [code(r), String((v as Row)?.means ?? ""), String((v as Row)?.example ?? "")]));
}

export function renderErrors(): string {
  return table(["code", "kind", "when", "HTTP"], errorRows().map((e) => [String(e.code), code(e.kind), e.when, String(e.http)]));
}

// ---------------------------------------------------------------------------------------------
// Limits: src/core/limits.ts LIMITS.

/** What each limit bounds, its unit, and a note; a limit not named here renders under its key. */
const LIMIT_TEXT: Record<string, [what: string, unit: string, note?: string]> = {
  line_bytes: ["one stdio line (message)", "bytes", "the stream goes on after an over-long line"],
  body_bytes: ["one HTTP body", "bytes", "413 before any work, sized or chunked"],
  batch_size: ["requests in a batch", ""],
  json_depth: ["JSON nesting depth", ""],
  short_text_chars: ["short text fields (reason, action, title, phase, next_step, …)", "characters"],
  text_chars: ["long text fields (description, summary, outcome, adjustment text, …)", "characters"],
  memory_content_chars: ["one memory body, artifact or context", "characters"],
  list_items: ["keywords, scope patterns, constraints, gaps, attachments per call", "items"],
  list_item_chars: ["one keyword, scope pattern, tool, source or scope item", "characters"],
  memories_per_root: ["memories per root", "", "checkpoints and outcomes are never refused for it"],
  save_many_items: ["records in one `memory.save_many`", ""],
  search_limit: ["memory search page", "hits"],
  context_read_bytes: ["one `context.read`", "bytes"],
  checkpoint_data_chars: ["a checkpoint's `data` (as compact JSON)", "characters"],
  owner_ttl_seconds: ["an owner's time to live (`owner_ttl_seconds`)", "seconds", "at least 1"],
  wake_at_days: ["how far ahead `run.park`'s `wake_at` may be", "days", "a time already past wakes at once"],
};

export function renderLimits(): string {
  const limits = ((limitsModule as unknown as Record<string, unknown>).LIMITS ?? {}) as Record<string, unknown>;
  const rows = Object.entries(limits).map(([key, value]) => {
    const [what, unit, note] = LIMIT_TEXT[key] ?? [key, ""];
    const n = typeof value === "number" ? fmt(value) : String(value);
    return [what, [n, unit].filter(Boolean).join(" ") + (note ? ` (${note})` : ""), code(key)];
  });
  return table(["limit", "value", "`system.describe` name"], rows);
}

// ---------------------------------------------------------------------------------------------
// The gate: read-only programs, protected paths, tools.

function examplesOf(rule: Row): string {
  const out: string[] = [];
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : String((x as Row)?.command ?? JSON.stringify(x)))) : []);
  const ex = rule.examples as Row | unknown[] | undefined;
  const match = [...list(rule.match), ...(Array.isArray(ex) ? list(ex) : list(ex?.match ?? ex?.allowed ?? ex?.pass))];
  const notMatch = [...list(rule.not_match), ...(Array.isArray(ex) ? [] : list(ex?.not_match ?? ex?.refused ?? ex?.deny))];
  if (match.length) out.push(`passes: ${match.map(code).join(", ")}`);
  if (notMatch.length) out.push(`refused: ${notMatch.map(code).join(", ")}`);
  return out.join("; ");
}

function optionsOf(rule: Row): string {
  const parts: string[] = [];
  if (typeof rule.flags === "string" && rule.flags) parts.push(code(`-${rule.flags}`));
  const valued = (v: unknown, dash: string, sep: string) => Object.keys((v ?? {}) as Row).map((k) => code(`${dash}${k}${sep}`));
  parts.push(...valued(rule.valued, "-", " X"), ...valued(rule.attached, "-", "X"));
  if (rule.numeric) parts.push(code("-NUM"));
  parts.push(...(Array.isArray(rule.long) ? rule.long.map((l) => code(String(l))) : []));
  parts.push(...Object.keys((rule.longValued ?? {}) as Row).map((k) => code(`${k}=X`)));
  parts.push(...Object.keys((rule.longOptional ?? {}) as Row).map((k) => code(`${k}[=X]`)));
  return parts.join(" ") || "none";
}

export function renderPrograms(): string {
  const programs = ((programsModule as unknown as Record<string, unknown>).READ_ONLY_PROGRAMS ?? {}) as Record<string, Row>;
  const rows: string[][] = [];
  for (const [name, rule] of Object.entries(programs)) {
    const kind = rule.builtin ? "builtin" : "program";
    const sub = (rule.sub ?? {}) as Record<string, Row>;
    if (Object.keys(sub).length > 0) {
      const global = Array.isArray(rule.globalFlags) ? rule.globalFlags.map((g) => code(String(g))).join(" ") : "";
      rows.push([code(name), kind, global ? `before the subcommand: ${global}` : "a subcommand below", String(rule.operands ?? ""), String(rule.note ?? ""), examplesOf(rule)]);
      for (const [s, r] of Object.entries(sub)) rows.push([code(`${name} ${s}`), "subcommand", optionsOf(r), String(r.operands ?? ""), String(r.note ?? ""), examplesOf(r)]);
    } else {
      rows.push([code(name), kind, optionsOf(rule), String(rule.operands ?? "") + (typeof rule.maxOperands === "number" ? ` (at most ${rule.maxOperands})` : ""), String(rule.note ?? ""), examplesOf(rule)]);
    }
  }
  return table(["program", "kind", "options it may take (`X`: a value)", "operands", "note", "examples"], rows);
}

export function renderProtected(): string {
  const rules = ((protectModule as unknown as Record<string, unknown>).PROTECTED ?? []) as Row[];
  const where: Record<string, string> = { anywhere: "at any depth", longrun_root: "directly inside a longrun root", absolute: "from `/`" };
  const rows = rules.map((r) => {
    const segments = (Array.isArray(r.segments) ? r.segments : []) as string[][];
    const path = segments.map((alts) => (alts.length === 1 ? alts[0] : `{${alts.join(",")}}`)).join("/");
    return [code(String(r.id)), code(path), where[String(r.where)] ?? String(r.where), r.read ? "yes" : "no", String(r.what ?? ""), examplesOf(r)];
  });
  return table(["rule", "path", "where", "reads too", "what", "examples"], rows);
}

export function renderTools(): string {
  const tools = ((toolsModule as unknown as Record<string, unknown>).TOOLS ?? {}) as Record<string, Row>;
  const decides: Record<string, (r: Row) => string> = {
    read: (r) => `passes unless a path it names is protected${Array.isArray(r.paths) && r.paths.length ? ` (${r.paths.map(String).map(code).join(", ")})` : " (whatever it names is checked like a path)"}`,
    inert: (r) => `passes, unless a line it carries starts with the approval marker${r.forgeCheck ? ", or it names the approval command itself" : ""}`,
    write: (r) => `needs the turn's lease; never a protected path (${code(String(r.path))})`,
    shell: (r) => (r.background ? "read-only commands only (it outlives the call); run inside `longrun sandbox`" : "read-only commands in read mode, others under the lease; run inside `longrun sandbox`"),
    deny: (r) => `denied: ${String(r.why ?? "")}`,
  };
  const rows = Object.entries(tools).map(([name, r]) => {
    const kind = String(r.kind);
    const refuse = Object.entries((r.refuse ?? {}) as Record<string, string>).map(([f, why]) => `${code(f)}: ${why}`).join("; ");
    const example = r.example === undefined ? "" : code(JSON.stringify(r.example));
    return [code(name), kind, (decides[kind] ?? (() => ""))(r), refuse, example];
  });
  return table(["tool", "kind", "in a turn", "refused fields", "example call"], rows);
}

// ---------------------------------------------------------------------------------------------

/** Every generated table: its name (the markers'), the docs file it lives in, and its renderer. */
export const TABLES: readonly { name: string; file: string; render: () => string }[] = [
  { name: "methods", file: "docs/protocol.md", render: renderMethods },
  { name: "errors", file: "docs/errors.md", render: renderErrors },
  { name: "gate-reasons", file: "docs/errors.md", render: renderGateReasons },
  { name: "limits", file: "docs/limits.md", render: renderLimits },
  { name: "readonly-programs", file: "docs/gate.md", render: renderPrograms },
  { name: "protected-paths", file: "docs/gate.md", render: renderProtected },
  { name: "tools", file: "docs/gate.md", render: renderTools },
];

/** The text with the block named `name` replaced by `body`; throws when its markers are missing. */
export function replaceBlock(text: string, name: string, body: string): string {
  const open = `<!-- generated:${name} -->`;
  const close = `<!-- /generated:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`the markers ${open} … ${close} are missing`);
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

/** The text between a block's markers, or null when they are missing. */
export function blockOf(text: string, name: string): string | null {
  const open = `<!-- generated:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(`<!-- /generated:${name} -->`);
  if (start < 0 || end < start) return null;
  return text.slice(start + open.length, end).replace(/^\n/, "").replace(/\n$/, "");
}

/** The tables whose checked-in text differs from what the code renders (missing markers included). */
export function staleTables(read: (file: string) => string = (f) => readFileSync(join(REPO, f), "utf8")): { name: string; file: string }[] {
  return TABLES.filter((t) => blockOf(read(t.file), t.name) !== t.render()).map(({ name, file }) => ({ name, file }));
}

/** What every docs file with a generated table should hold: path → text. */
export function renderDocs(read: (file: string) => string = (f) => readFileSync(join(REPO, f), "utf8")): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of TABLES) out.set(t.file, replaceBlock(out.get(t.file) ?? read(t.file), t.name, t.render()));
  return out;
}

if (import.meta.main) {
  for (const [file, text] of renderDocs()) writeFileSync(join(REPO, file), text);
  console.log(`rendered ${TABLES.length} tables into ${new Set(TABLES.map((t) => t.file)).size} files`);
}
