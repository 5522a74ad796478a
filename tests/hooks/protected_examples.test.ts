/**
 * Every protected-path rule's own examples (src/root/protected.ts), run in process through the
 * gate's path check (`pathHit`) over a real longrun root on disk: each refused path is refused by
 * that very rule for writing (and for reading when the rule keeps reads out too, and let through
 * for reading when it does not), and each passing path is refused by no rule at all.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Access, pathHit, type ProtectContext, protectContext } from "../../src/hooks/protect.ts";
import { lit } from "../../src/hooks/protect_table.ts";
import { PROTECTED, type ProtectedRule } from "../../src/root/protected.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

type Row = Pick<ProtectedRule, "id" | "read" | "examples">;

/** One line for every example the path check decides otherwise than its row says. */
function wrongExamples(rows: readonly Row[], ctx: ProtectContext): string[] {
  const at = (p: string) => (p.startsWith("~/") ? join(ctx.home, p.slice(2)) : p.startsWith("/") ? p : join(ctx.root, p));
  const hit = (p: string, access: Access) => pathHit(lit(at(p)), access, ctx)?.rule?.id ?? null;
  const out: string[] = [];
  for (const r of rows) {
    for (const p of r.examples.refused) {
      const w = hit(p, "write");
      if (w !== r.id) out.push(`${r.id}: writing ${p} is ${w === null ? "let through" : `refused by ${w}`}, not refused by ${r.id}`);
      const rd = hit(p, "read");
      if (r.read && rd !== r.id) out.push(`${r.id}: reading ${p} is ${rd === null ? "let through" : `refused by ${rd}`}, not refused by ${r.id}`);
      if (!r.read && rd !== null) out.push(`${r.id}: reading ${p} is refused by ${rd}, but ${r.id} lets reads through`);
    }
    for (const p of r.examples.pass) {
      for (const access of ["write", "read"] as const) {
        const by = hit(p, access);
        if (by !== null) out.push(`${r.id}: ${access === "write" ? "writing" : "reading"} ${p} is refused by ${by}, but it is one of ${r.id}'s passing examples`);
      }
    }
  }
  return out;
}

describe("protected-path rules carry their own examples", () => {
  let dir: string;
  let ctx: ProtectContext;
  before(() => {
    dir = tempDir("protected-examples");
    const root = join(dir, "project");
    const home = join(dir, "home");
    mkdirSync(join(root, ".longrun"), { recursive: true });
    mkdirSync(join(root, "docs"), { recursive: true });
    mkdirSync(join(root, "data"), { recursive: true });
    mkdirSync(home, { recursive: true });
    ctx = protectContext(root, root, { HOME: home });
  });
  after(() => removeDir(dir));

  test("every rule has a path it refuses and a path it lets through", () => {
    const bare = PROTECTED.filter((r) => r.examples.refused.length === 0 || r.examples.pass.length === 0).map((r) => r.id);
    assert.deepEqual(bare, []);
  });

  test("every example is decided as its rule says", () => {
    assert.deepEqual(wrongExamples(PROTECTED, ctx), []);
  });

  test("the check can fail: a wrong example is reported, naming the rule that decided it", () => {
    const wrong: Row[] = [
      { id: "longrun_state", read: true, examples: { refused: ["src/main.ts"], pass: [".longrun/state.json"] } },
      { id: "claude_settings", read: false, examples: { refused: ["memory.db"], pass: [] } },
    ];
    const lines = wrongExamples(wrong, ctx);
    assert.ok(lines.some((l) => l.startsWith("longrun_state: writing src/main.ts is let through")), lines.join("\n"));
    assert.ok(lines.some((l) => l.startsWith("longrun_state: writing .longrun/state.json is refused by longrun_state, but it is one of")), lines.join("\n"));
    assert.ok(lines.some((l) => l.startsWith("claude_settings: writing memory.db is refused by longrun_memory")), lines.join("\n"));
  });
});
