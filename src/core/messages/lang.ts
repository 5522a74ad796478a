/** The languages people read longrun in (refusals, errors, checkpoint text), chosen by a root's `.longrun/settings.json` `lang`. */
export const LANGS = ["en", "zh", "ko"] as const;
export type Lang = (typeof LANGS)[number];

export function isLang(value: unknown): value is Lang {
  return typeof value === "string" && (LANGS as readonly string[]).includes(value);
}
