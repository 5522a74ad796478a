/** memory.*: the root's project memory. Searches run in the memory Worker, beside the state lane. */
import { NotFoundError } from "../../core/errors.ts";
import { callerName, method } from "../method.ts";
import { S } from "../schemas.ts";

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
    summary: "Forget memory records (ids; reason): their text leaves the search index, the record and raw_data; a tombstone stays so a late write cannot bring them back; checkpoints and outcomes are refused",
    params: S.memoryForget,
    lane: "memory",
    readOnly: false,
    handler: async ({ root, caller }, p) => root.memory.forget(p.ids, callerName(caller), p.reason ?? null),
  }),
];
