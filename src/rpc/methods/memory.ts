/** memory.*: the root's project memory. Searches run in the memory Worker, beside the state lane. */
import { NotFoundError } from "../../core/errors.ts";
import { LIMITS } from "../../core/limits.ts";
import type { Root } from "../../root/root.ts";
import { invalidParams } from "../errors.ts";
import { callerName, method } from "../method.ts";
import { S } from "../schemas.ts";

/** What memory.search finds for `query` (of `type`), at most LIMITS.save_many_items ids, and whether more match. */
async function matching(root: Root, query: string, type: string | undefined): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await root.memory.search(query, { limit: LIMITS.search_limit, type, cursor });
    for (const hit of page.hits) {
      if (ids.length === LIMITS.save_many_items) return { ids, more: true };
      ids.push(hit.id);
    }
    if (!page.next_cursor) return { ids, more: false };
    cursor = page.next_cursor;
  }
}

export const memoryMethods = [
  method({
    name: "memory.save",
    side: "agent",
    summary: "Save a memory record (type, title, content, keywords); long bodies go to raw_data/; returns its id",
    params: S.memorySave,
    lane: "memory",
    readOnly: false,
    handler: async ({ root }, p) => {
      const task = await root.state.load().catch(() => null);
      const { record, created } = await root.memory.save({
        type: p.type,
        title: p.title,
        content: p.content,
        keywords: p.keywords ?? [],
        task_id: task?.task_id ?? null,
      });
      const { content: _content, ...meta } = record;
      return { id: record.id, created, record: meta };
    },
  }),
  method({
    name: "memory.save_many",
    side: "agent",
    summary: "Save up to 1,000 memory records in one transaction (an import); returns their ids in order",
    params: S.memorySaveMany,
    lane: "memory",
    readOnly: false,
    handler: async ({ root }, p) => {
      const task = await root.state.load().catch(() => null);
      const ids = await root.memory.saveMany(
        p.items.map((i) => ({ type: i.type, title: i.title, content: i.content, keywords: i.keywords ?? [], task_id: task?.task_id ?? null })),
      );
      return { ids, count: ids.length };
    },
  }),
  method({
    name: "memory.search",
    side: "agent",
    summary: "Full-text search (English, Chinese, Korean), bm25-ranked; hits carry id, title, snippet, score; paginated by cursor",
    params: S.memorySearch,
    lane: "read",
    readOnly: true,
    handler: ({ root }, p) => root.memory.search(p.query, { limit: p.limit, type: p.type, cursor: p.cursor }),
  }),
  method({
    name: "memory.get",
    side: "agent",
    summary: "One memory record, whole body included",
    params: S.memoryGet,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => {
      const record = await root.memory.get(p.id);
      if (!record) throw new NotFoundError("memory", p.id, "; memory.search lists what exists");
      return { record };
    },
  }),
  method({
    name: "memory.update",
    side: "agent",
    summary: "A new version of a memory record (content; title and keywords kept unless given): a new id that supersedes the old; search finds the newest version only, the old stays readable by id",
    params: S.memoryUpdate,
    lane: "memory",
    readOnly: false,
    handler: async ({ root }, p) => {
      const { record, created } = await root.memory.update(p.id, { content: p.content, title: p.title, keywords: p.keywords });
      const { content: _content, ...meta } = record;
      return { id: record.id, created, supersedes: p.id, record: meta };
    },
  }),
  method({
    name: "memory.forget",
    side: "host",
    summary:
      "Forget memory records (ids, or every record memory.search finds for query, optionally of one type, up to 1,000 a call: more says whether others match; dry_run lists them and forgets nothing; reason): their text leaves the search index, the record and raw_data; a tombstone stays so a late write cannot bring them back; checkpoints and outcomes are refused by id and skipped by query",
    params: S.memoryForget,
    lane: "memory",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      if ((p.ids === undefined) === (p.query === undefined)) {
        throw invalidParams("Invalid params for memory.forget: give exactly one of ids (memory ids) or query (what memory.search finds)", { field: "ids" });
      }
      if (p.ids !== undefined && (p.type !== undefined || p.dry_run !== undefined)) {
        throw invalidParams("Invalid params for memory.forget: type and dry_run go with query, not with ids", { field: p.type !== undefined ? "type" : "dry_run" });
      }
      if (p.ids) return root.memory.forget(p.ids, callerName(caller), p.reason ?? null);
      const { ids, more } = await matching(root, p.query!, p.type);
      if (p.dry_run) return { forgotten: [], already: [], skipped: [], matched: ids, more };
      return { ...(ids.length ? await root.memory.forget(ids, callerName(caller), p.reason ?? null, true) : { forgotten: [], already: [], skipped: [] }), matched: ids, more };
    },
  }),
];
