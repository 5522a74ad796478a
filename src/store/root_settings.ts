/**
 * A root's own settings, `<root>/.longrun/settings.json`, all optional:
 *
 *   {"lang": "zh"}     the language of checkpoint text for people: "en" (default), "zh" or "ko"
 *
 * Read when a checkpoint is made (a request's `lang` wins). A missing file is the defaults; a file
 * that cannot be read or names an unknown language is reported here as an error, and the contract
 * then writes English: a setting never stops a checkpoint from being saved.
 */
import { readFileSync } from "node:fs";
import { type CheckpointLang, isCheckpointLang } from "../core/checkpoint.ts";

export function readCheckpointLang(path: string): CheckpointLang | null {
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
