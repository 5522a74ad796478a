/**
 * The reference process for `bench/checkpoint.ts stdio`: a stdio JSON-RPC server that does one
 * durable insert per request. longrun's own stdio server and framing (`serveStdio`, as bench/echo.ts
 * uses them) with a dispatcher that, for every line, inserts a row of about a rendered
 * checkpoint's size into a plain table of a libSQL database opened the way a root's is
 * (src/db/database.ts: WAL, synchronous=FULL), in its own transaction, and answers with its id.
 *
 *   node_modules/.bin/bun bench/insert_server.ts DIR
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Database } from "../src/db/database.ts";
import type { Dispatcher } from "../src/rpc/dispatcher.ts";
import { serveStdio } from "../src/stdio/server.ts";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: bun bench/insert_server.ts DIR");
  process.exit(2);
}
const db = await Database.open(pathToFileURL(join(dir, "ref.db")).href);
await db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
const text = "x".repeat(900); // about the size of a rendered checkpoint

const insert = {
  async handleText(line: string): Promise<string | null> {
    const id = (JSON.parse(line) as { id?: unknown }).id ?? null;
    await db.write((tx) => tx.execute({ sql: "INSERT INTO t(body) VALUES (?)", args: [text] }));
    return JSON.stringify({ jsonrpc: "2.0", id, result: { ok: true } });
  },
} as unknown as Dispatcher;

await serveStdio({ dispatcher: insert, input: process.stdin, output: process.stdout });
await db.close();
