/**
 * The one catalog of people-facing messages: every id with its English, Chinese (简体) and Korean
 * template. Machine fields (`kind`, `code`, `data.*`, reason codes) are never in it: they are the
 * same in every language. The language is the root's `.longrun/settings.json` `lang` (default en).
 * @example say("gate.read_only", "zh", { action: '"Write a.ts"', turn: 3 }) // '写入被拒绝："Write a.ts" 需要写租约…'
 */
import { AGENT_MESSAGES } from "./agent.ts";
import { ERROR_MESSAGES, KIND_MESSAGES } from "./errors.ts";
import { GATE_MESSAGES, GRANT_MESSAGES, HOOK_MESSAGES } from "./gate.ts";
import { PAGE_MESSAGES } from "./page.ts";
import { fill, type Lang, type Message, type Params } from "./render.ts";

export { cap, fill, isLang, type Lang, LANGS, type Message, type Params, placeholdersOf } from "./render.ts";

export const MESSAGES = {
  ...GATE_MESSAGES,
  ...GRANT_MESSAGES,
  ...HOOK_MESSAGES,
  ...ERROR_MESSAGES,
  ...KIND_MESSAGES,
  ...AGENT_MESSAGES,
  ...PAGE_MESSAGES,
} as const satisfies Record<string, Message>;

export type MessageId = keyof typeof MESSAGES;

/** The message `id` in `lang` with its placeholders filled. */
export function say(id: MessageId, lang: Lang, params: Params = {}): string {
  return fill(MESSAGES[id][lang], params);
}
