/** events.*: the root's event log (src/root/events.ts), read by id, optionally waiting for the next event. */
import { L } from "../ledger_schemas.ts";
import { method } from "../method.ts";

export const eventMethods = [
  method({
    name: "events.read",
    side: "agent",
    summary:
      "The root's events after an id, oldest first: id, kind (task.created, task.status, task.checkpoint, lease.granted/revoked/requested, run.requested/granted/claimed/parked/woken/stale_owner/deadline/budget_exhausted/finished, …), task_id, run_id, epoch, detail, at; kinds (a name ending in . is a prefix), task_id, run_id filter; wait_ms (at most 25000) waits for one; last_id: the newest id",
    params: L.eventsRead,
    lane: "read",
    readOnly: true,
    handler: ({ root, caller }, p) => root.events.read(p, caller.side),
  }),
];
