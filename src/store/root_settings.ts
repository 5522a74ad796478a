/**
 * A root's own settings, `<root>/.longrun/settings.json`, all optional:
 *
 *   {"lang": "zh"}     the language of checkpoint text for people: "en" (default), "zh" or "ko"
 *   {"run_allowances": [{"name": "web research", "tools": ["fetch"], "sources": ["*"], "send": [],
 *     "budget": {"cost": 2, "tool_calls": 50}}]}
 *                      standing grants: a research run the agent side asks for (run.start, never a
 *                      continuation) within one allowance's lists is granted at once, its budget
 *                      capped by the allowance's; recorded as the host's (`host:settings`, the name)
 *   {"standby_owners": ["worker-2"]}
 *                      owners that may claim a run whose owner went stale (missed its
 *                      owner_ttl_seconds); without it (the default) only the host claims a stale run
 *   {"retention": [{"types": ["note"], "older_than_days": 90}]}
 *                      memories a running longrun process forgets once they are older than that
 *                      (`"types": ["*"]`: every type); checkpoints and outcomes are never forgotten
 *   {"webhooks": [{"name": "ops", "url": "https://hooks.example/longrun", "secret_file": "/etc/longrun/ops.key",
 *     "kinds": ["run.", "approval.requested"]}]}
 *                      the event log POSTed to the host's URLs by a running longrun process, in
 *                      order, each body signed with the key in secret_file (or the variable
 *                      secret_env names), retried until the URL answers 2xx (src/root/webhooks.ts)
 *
 * Read when a checkpoint is made (a request's `lang` wins). A missing file is the defaults; a file
 * that cannot be read or names an unknown language is reported here as an error, and the contract
 * then writes English: a setting never stops a checkpoint from being saved.
 */
import { existsSync, readFileSync } from "node:fs";
import { type CheckpointLang, isCheckpointLang } from "../core/checkpoint.ts";
import { BUDGET_DIMENSIONS } from "../core/run_rules/budget.ts";
import { type Allowance, GRANT_LISTS } from "../core/run_rules/grant.ts";

function readSettings(path: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return null;
    throw e;
  }
  const raw: unknown = JSON.parse(text);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`${path}: settings are a JSON object`);
  return raw as Record<string, unknown>;
}

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === "string");

/**
 * The host's standing allowances for research runs; none when the file or the key is missing. A
 * malformed allowance is an error (the caller then grants nothing by it: a request waits for the host).
 */
export function readRunAllowances(path: string): Allowance[] {
  const list = readSettings(path)?.run_allowances;
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${path}: run_allowances is a list of allowances`);
  return list.map((a, i): Allowance => {
    const where = `${path}: run_allowances[${i}]`;
    if (typeof a !== "object" || a === null || Array.isArray(a)) throw new Error(`${where} is an object`);
    const o = a as Record<string, unknown>;
    if (typeof o.name !== "string" || !o.name) throw new Error(`${where}.name is a non-empty string`);
    for (const k of GRANT_LISTS) if (o[k] !== undefined && !isStrings(o[k])) throw new Error(`${where}.${k} is a list of strings`);
    const b = o.budget as Record<string, unknown> | undefined;
    if (b !== undefined) {
      if (typeof b !== "object" || b === null || Array.isArray(b)) throw new Error(`${where}.budget is an object`);
      for (const [k, val] of Object.entries(b)) {
        const ok = (BUDGET_DIMENSIONS as readonly string[]).includes(k) || k === "wall_seconds" ? typeof val === "number" && val >= 0 : k === "deadline" ? typeof val === "string" && !Number.isNaN(Date.parse(val)) : false;
        if (!ok) throw new Error(`${where}.budget.${k} is not a budget limit (${BUDGET_DIMENSIONS.join(", ")}, wall_seconds, deadline)`);
      }
    }
    return o as unknown as Allowance;
  });
}

/**
 * The owners the host names as standbys for stale runs; none when the file or the key is missing.
 * A malformed list is an error (the caller then names no standby: only the host claims a stale run).
 */
export function readStandbyOwners(path: string): string[] {
  const list = readSettings(path)?.standby_owners;
  if (list === undefined) return [];
  if (!isStrings(list) || list.some((s) => !s)) throw new Error(`${path}: standby_owners is a list of owner names`);
  return list;
}

export function readCheckpointLang(path: string): CheckpointLang | null {
  if (!existsSync(path)) return null; // the common case (no settings), without an exception per checkpoint
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return null;
    throw e;
  }
  const raw: unknown = JSON.parse(text);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`${path}: settings are a JSON object`);
  const lang = (raw as Record<string, unknown>).lang;
  if (lang === undefined) return null;
  if (!isCheckpointLang(lang)) throw new Error(`${path}: lang is one of "en", "zh", "ko"`);
  return lang;
}

/** One retention rule: memories of these types (`*`: any) older than this many days are forgotten. */
export interface RetentionRule {
  types: string[];
  older_than_days: number;
}

/** The retention rules; none when the file or the key is missing. A malformed rule is an error (then nothing is forgotten). */
export function readRetention(path: string): RetentionRule[] {
  const list = readSettings(path)?.retention;
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${path}: retention is a list of rules such as {"types": ["note"], "older_than_days": 90}`);
  return list.map((r, i): RetentionRule => {
    const where = `${path}: retention[${i}]`;
    if (typeof r !== "object" || r === null || Array.isArray(r)) throw new Error(`${where} is an object`);
    const o = r as Record<string, unknown>;
    if (!isStrings(o.types) || !o.types.length || o.types.some((t) => !t)) throw new Error(`${where}.types is a non-empty list of memory types, or ["*"]`);
    const days = o.older_than_days;
    if (typeof days !== "number" || !Number.isFinite(days) || days < 1 || days > 36_500) throw new Error(`${where}.older_than_days is a number of days from 1 to 36500`);
    return { types: o.types, older_than_days: days };
  });
}

/** One webhook of the root's settings (src/root/webhooks.ts delivers the event log to it). */
export interface WebhookSetting {
  name: string;
  url: string;
  /** Where the signing key is: a file (its text, trimmed) or an environment variable of the process. */
  secret: { file: string } | { env: string };
  /** Only these kinds (a name ending in `.` is a prefix); null: every kind. */
  kinds: string[] | null;
  /** The wait before the first retry of a failed delivery (doubled each time, at most 5 minutes). */
  retry_after_ms: number;
  /** Where a webhook seen for the first time starts: the newest event ("now", the default) or the oldest kept ("start"). */
  from: "now" | "start";
}

const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/**
 * The host's webhooks; none when the file or the key is missing. A malformed one is an error (the
 * caller then delivers to none: an unclear setting never sends the log anywhere).
 */
export function readWebhooks(path: string): WebhookSetting[] {
  const list = readSettings(path)?.webhooks;
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${path}: webhooks is a list such as [{"name": "ops", "url": "https://…", "secret_file": "/abs/key"}]`);
  const names = new Set<string>();
  return list.map((h, i): WebhookSetting => {
    const where = `${path}: webhooks[${i}]`;
    if (typeof h !== "object" || h === null || Array.isArray(h)) throw new Error(`${where} is an object`);
    const o = h as Record<string, unknown>;
    if (typeof o.name !== "string" || !WEBHOOK_NAME.test(o.name)) throw new Error(`${where}.name is 1-40 lower-case letters, digits, _ or -`);
    if (names.has(o.name)) throw new Error(`${where}.name ${o.name} is used twice; each webhook has its own name`);
    names.add(o.name);
    let url: URL | null = null;
    try {
      url = typeof o.url === "string" ? new URL(o.url) : null;
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) throw new Error(`${where}.url is an http:// or https:// URL`);
    const file = o.secret_file;
    const env = o.secret_env;
    if ((file === undefined) === (env === undefined)) throw new Error(`${where} names its signing key with exactly one of secret_file (an absolute path) or secret_env (a variable name)`);
    if (file !== undefined && (typeof file !== "string" || !file.startsWith("/"))) throw new Error(`${where}.secret_file is an absolute path`);
    if (env !== undefined && (typeof env !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(env))) throw new Error(`${where}.secret_env is an environment variable's name`);
    if (o.kinds !== undefined && (!isStrings(o.kinds) || !o.kinds.length || o.kinds.some((k) => !k))) throw new Error(`${where}.kinds is a non-empty list of event kinds (a name ending in . is a prefix)`);
    const retry = o.retry_after_ms ?? 1000;
    if (typeof retry !== "number" || !Number.isInteger(retry) || retry < 50 || retry > 60_000) throw new Error(`${where}.retry_after_ms is a whole number of milliseconds from 50 to 60000`);
    if (o.from !== undefined && o.from !== "now" && o.from !== "start") throw new Error(`${where}.from is "now" (the default: only events after it is first seen) or "start" (every event the log keeps)`);
    return {
      name: o.name,
      url: url.href,
      secret: file !== undefined ? { file: file as string } : { env: env as string },
      kinds: (o.kinds as string[] | undefined) ?? null,
      retry_after_ms: retry,
      from: (o.from as "now" | "start" | undefined) ?? "now",
    };
  });
}
