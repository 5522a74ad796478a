/**
 * A message of the catalog: one template per language with `{name}` placeholders, and an example
 * of the values it takes (the catalog's test renders every example in every language).
 */
import type { Lang } from "./lang.ts";

export { isLang, type Lang, LANGS } from "./lang.ts";

export type Params = Readonly<Record<string, string | number>>;

export interface Message {
  readonly en: string;
  readonly zh: string;
  readonly ko: string;
  /** Values for every placeholder, as the message is used. */
  readonly example: Params;
}

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/** The placeholder names of a template, sorted: `"{a} or {b}"` → `["a", "b"]`. */
export function placeholdersOf(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))].sort();
}

/**
 * A template with its placeholders filled; a placeholder without a value is left as written
 * (a message never fails for a missing value).
 * @example fill("Write refused: {action}", { action: '"Bash"' }) // 'Write refused: "Bash"'
 */
export function fill(template: string, params: Params): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

/** "A sentence" from "a sentence" (English only; Chinese and Korean have no capitals). */
export function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
