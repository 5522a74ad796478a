/**
 * The house's floors, enforced: every room of src/ (a folder, or a file at the top) sits on one
 * floor of FLOORS, an import from one room to another goes down a floor, never up or across, and
 * no file reaches itself through imports (no circle, type imports included). CONTRIBUTING.md draws
 * the same table (floorsPicture), checked here.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { REPO } from "./support/helpers.ts";

/** Bottom to top; a room imports only rooms on a lower floor. */
export const FLOORS: readonly { floor: number; rooms: readonly string[]; holds: string }[] = [
  { floor: 0, rooms: ["core", "version.ts"], holds: "the contract's rules, errors, ids and ports; no runtime, no I/O" },
  { floor: 1, rooms: ["runtime"], holds: "the only Bun- or Deno-specific code: SQLite for the hook, HTTP serving, loading own modules" },
  { floor: 2, rooms: ["db"], holds: "memory.db: the connection and its local, Worker and remote backends, the SqlConn port, migrations, fault classification" },
  { floor: 3, rooms: ["store"], holds: "task state, the pending checkpoint, blobs, idempotency, settings, the server store's configuration" },
  { floor: 4, rooms: ["memory", "ledger"], holds: "project memory and its search Worker; the run ledger" },
  { floor: 5, rooms: ["root"], holds: "a root: its layout table, where it may be, opening it, the registry of open roots" },
  { floor: 6, rooms: ["sandbox"], holds: "the OS boundary around a Bash command (bubblewrap, Landlock)" },
  { floor: 7, rooms: ["hooks"], holds: "the Claude Code hooks: the gate, its shell reader and tables, install" },
  { floor: 8, rooms: ["rpc"], holds: "the dispatcher, valibot schemas, framing, one file of methods per area" },
  { floor: 9, rooms: ["stdio", "mcp"], holds: "JSON-RPC over stdio; the MCP server" },
  { floor: 10, rooms: ["http"], holds: "the HTTP API (and MCP over HTTP), the status page" },
  { floor: 11, rooms: ["cli"], holds: "the commands" },
  { floor: 12, rooms: ["main.ts"], holds: "the entry" },
];

const SRC = join(REPO, "src");

/** The floors as CONTRIBUTING.md draws them, top floor first: the floor, its rooms, what they hold. */
export function floorsPicture(floors: typeof FLOORS): string {
  const name = (r: string) => (r.endsWith(".ts") ? r : `${r}/`);
  const width = Math.max(...floors.map((f) => f.rooms.map(name).join(" ").length));
  return [...floors]
    .sort((a, b) => b.floor - a.floor)
    .map((f) => `${String(f.floor).padStart(2)}  ${f.rooms.map(name).join(" ").padEnd(width)}  ${f.holds}`)
    .join("\n");
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The room of a path relative to src/: its first folder, or the file itself at the top. */
export function roomOf(rel: string): string {
  const i = rel.indexOf("/");
  return i === -1 ? rel : rel.slice(0, i);
}

/** Every relative import of a source, `import type` and `import("…")` (in types too) included. */
export function importsOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  return [
    ...code.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/gms),
    ...code.matchAll(/\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
}

export type Graph = Map<string, string[]>;

/** Imports that go up a floor or across to another room of the same floor, as "from -> to". */
export function upArrows(graph: Graph, floors: typeof FLOORS): string[] {
  const floorOf = new Map(floors.flatMap((f) => f.rooms.map((r) => [r, f.floor] as const)));
  const bad: string[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const a = roomOf(from);
      const b = roomOf(to);
      if (a === b) continue;
      const fa = floorOf.get(a);
      const fb = floorOf.get(b);
      if (fa === undefined || fb === undefined || fb >= fa) bad.push(`${from} -> ${to}`);
    }
  }
  return bad;
}

/** The circles of a graph: its strongly connected parts of more than one file, or a file importing itself (Tarjan). */
export function circles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

function sourceGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of filesUnder(SRC)) {
    const from = relative(SRC, file);
    const tos = importsOf(readFileSync(file, "utf8"))
      .map((spec) => relative(SRC, resolve(dirname(file), spec)))
      .filter((to) => to.endsWith(".ts") && !to.startsWith(".."));
    graph.set(from, [...new Set(tos)]);
  }
  return graph;
}

describe("the floors of src/", () => {
  const graph = sourceGraph();

  test("every room of src/ is on exactly one floor", () => {
    const placed = FLOORS.flatMap((f) => f.rooms);
    assert.equal(new Set(placed).size, placed.length, "a room is on two floors");
    const rooms = [...new Set([...graph.keys()].map(roomOf))].sort();
    assert.deepEqual(rooms.filter((r) => !placed.includes(r)), [], "rooms on no floor: add them to FLOORS (and CONTRIBUTING.md)");
  });

  test("no import goes up a floor or across to another room of its floor", () => {
    assert.ok([...graph.values()].flat().length > 300, "the imports are read");
    assert.deepEqual(upArrows(graph, FLOORS), []);
  });

  test("no file reaches itself through imports (no circle, type imports included)", () => {
    assert.deepEqual(circles(graph), []);
  });

  test("CONTRIBUTING.md draws these floors (its picture is floorsPicture's text)", () => {
    const text = readFileSync(join(REPO, "CONTRIBUTING.md"), "utf8");
    const m = /<!-- floors -->\n```\n([\s\S]*?)\n```\n<!-- \/floors -->/.exec(text);
    assert.ok(m, "CONTRIBUTING.md has a <!-- floors --> picture");
    assert.equal(m[1], floorsPicture(FLOORS));
  });

  test("the checks can fail: an arrow up, an arrow across, an unplaced room and a circle are reported", () => {
    const floors = [
      { floor: 0, rooms: ["core"], holds: "" },
      { floor: 1, rooms: ["db", "store"], holds: "" },
      { floor: 2, rooms: ["rpc"], holds: "" },
    ];
    const g: Graph = new Map([
      ["core/a.ts", ["rpc/b.ts"]],
      ["store/c.ts", ["db/d.ts", "core/a.ts"]],
      ["rpc/b.ts", ["core/a.ts", "x/e.ts"]],
      ["db/d.ts", []],
    ]);
    assert.deepEqual(upArrows(g, floors).sort(), ["core/a.ts -> rpc/b.ts", "rpc/b.ts -> x/e.ts", "store/c.ts -> db/d.ts"]);
    assert.deepEqual(circles(g), [["core/a.ts", "rpc/b.ts"]]);
    assert.deepEqual(circles(new Map([["a.ts", ["a.ts"]]])), [["a.ts"]]);
    assert.deepEqual(importsOf(`import type { X } from "../x.ts";\nconst m = await import("./y.ts");\n// import { z } from "./z.ts";\ntype T = typeof import("../t.ts");`), ["../x.ts", "./y.ts", "../t.ts"]);
  });
});
