/**
 * `longrun events [--after N] [--kinds run.,lease.requested] [--follow] [--json]`: the root's event
 * log for a person (events.read): one line per event, oldest first, `--json` one JSON object per
 * line. With `--follow` it keeps waiting for new events until interrupted (Ctrl-C ends it, exit 0).
 */
import type { RootEvent } from "../../root/events.ts";
import { asPerson, fail, PersonError, type PersonTarget, shown } from "./host.ts";

const WAIT_MS = 20_000;

/** One event as a person reads it. */
export function eventLine(e: RootEvent): string {
  const where = [e.task_id ? `task ${e.task_id}` : "", e.run_id ? `run ${e.run_id}${e.epoch ? `/${e.epoch}` : ""}` : ""].filter(Boolean).join(" ");
  const d = e.detail;
  const why = typeof d.reason === "string" ? d.reason : typeof d.waiting_for === "string" ? `waiting for ${d.waiting_for}` : typeof d.to === "string" ? `${String(d.from)} -> ${d.to}` : "";
  return `${String(e.id).padStart(5)}  ${e.at.replace(/\.\d+Z$/, "Z")}  ${e.kind}${where ? `  ${where}` : ""}${why ? `  ${shown(why.slice(0, 120))}` : ""}`;
}

export async function runEvents(o: PersonTarget & { after?: string; kinds?: string; follow: boolean }): Promise<number> {
  if (o.after !== undefined && !/^\d{1,15}$/.test(o.after)) return fail(o, "events", new PersonError(`--after ${JSON.stringify(o.after)} is not an event id (a whole number, e.g. --after 42)`));
  const kinds = o.kinds?.split(",").map((k) => k.trim()).filter(Boolean);
  return asPerson("events", o, false, async (s) => {
    let after = Number(o.after ?? 0);
    // following only reads: an interrupt ends it at once, mid-wait too
    if (o.follow) for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(0));
    for (;;) {
      const page = await s.call<{ events: RootEvent[]; last_id: number }>("events.read", { after, limit: 500, ...(kinds?.length ? { kinds } : {}), ...(o.follow ? { wait_ms: WAIT_MS } : {}) });
      for (const e of page.events) console.log(o.json ? JSON.stringify(e) : eventLine(e));
      if (page.events.length) after = page.events[page.events.length - 1]!.id;
      else if (!o.follow) return 0;
    }
  });
}
