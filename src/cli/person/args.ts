/**
 * The person's verbs as main.ts hands them over: which flags belong to which verb, and the call
 * to each (`start`, `list`, `grant`, `revoke`, `answer`, `events`, `approvals`, `approve`, `reject`).
 */
import type { PersonTarget } from "./host.ts";

export type PersonVerb = "start" | "list" | "grant" | "revoke" | "answer" | "events" | "approvals" | "approve" | "reject";

/** Flags only some commands take, and which. */
const ONLY: Record<string, readonly string[]> = {
  json: ["start", "list", "grant", "revoke", "answer", "events", "approvals", "approve", "reject"],
  edit: ["approve"],
  scope: ["grant"],
  data: ["answer"],
  after: ["events"],
  kinds: ["events"],
  follow: ["events"],
  ttl: ["grant"],
  uses: ["grant"],
};

/** A flag given to a command that does not take it, as a usage message; else null. */
export function personFlagsMisused(command: string, values: Record<string, unknown>): string | null {
  for (const [flag, commands] of Object.entries(ONLY)) {
    if (values[flag] !== undefined && !commands.includes(command)) return `--${flag} is an option of longrun ${commands.join(", ")}, not of ${command}`;
  }
  return null;
}

export async function runPersonVerb(verb: PersonVerb, t: PersonTarget, words: string[], values: Record<string, unknown>): Promise<number> {
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  if (verb === "start") return (await import("./start.ts")).runStart({ ...t, description: words.join(" ") });
  if (verb === "list") return (await import("./list.ts")).runList(t);
  if (verb === "approvals") return (await import("./approvals.ts")).runApprovals(t);
  if (verb === "approve" || verb === "reject") return (await import("./approvals.ts")).runAnswerApproval({ ...t, verb, words, edit: text(values.edit) });
  if (verb === "answer") return (await import("./answer.ts")).runAnswer({ ...t, words, data: text(values.data) });
  if (verb === "events") return (await import("./events.ts")).runEvents({ ...t, after: text(values.after), kinds: text(values.kinds), follow: values.follow === true });
  const grant = await import("./grant.ts");
  if (verb === "revoke") return grant.runRevoke(t);
  return grant.runGrant({ ...t, reason: words.join(" "), scope: text(values.scope), ttl: text(values.ttl), uses: text(values.uses) });
}
