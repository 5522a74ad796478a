/**
 * `longrun demo`: the seed's five steps (seed 002, section 五) in a fresh temporary root, with
 * no LLM and no key. Steps 1-3 use the library in this process; steps 4-5 run in a separate
 * `longrun serve` process driven over JSON-RPC, so the resume proves persistence, not memory.
 * Every step checks what it claims; any deviation ends with a FAIL line and exit status 1.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WriteGateViolation } from "../core/errors.ts";
import type { TaskState } from "../core/task.ts";
import { Root } from "../root/root.ts";
import { selfArgv } from "../runtime/index.ts";
import { ChildRpc, RpcCallError } from "./rpc_client.ts";

class DemoFailure extends Error {}

function expect(cond: unknown, what: string): asserts cond {
  if (!cond) throw new DemoFailure(what);
}

export async function runDemo(out: (line: string) => void = (l) => console.log(l), keep = false): Promise<number> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "longrun-demo-")));
  let child: ChildRpc | null = null;
  try {
    out(`root: ${dir}`);
    const root = await Root.open(dir);
    const c = root.contract;
    let task: TaskState;
    try {
      out("[1] start_task: read-only by default");
      task = (await c.startTask("Demo: adapt the supplier interface", ["supplier", "adapter"])).task;
      try {
        await c.requireWritable("demo write");
        throw new DemoFailure("a write was allowed before any lease was granted");
      } catch (e) {
        if (!(e instanceof WriteGateViolation) || e.reason !== "read_only") throw e;
        out(`    gate: ${e.message}`);
      }

      out("[2] enable_writes: lease for this turn only");
      task = await c.enableWrites({ reason: "plan approved", granted_by: "host:demo" });
      const ok = await c.requireWritable("demo write");
      out(`    gate: ${task.access_mode}; turn: ${ok.turn}`);
      expect(task.access_mode === "writable" && ok.turn === 1, "the lease was not granted for turn 1");

      out("[3] checkpoint: save memory before emitting the resume token");
      const cp = await c.checkpoint({ summary: "interface mapped", next_step: "connect the second supplier", phase: "interface adaptation" });
      const saved = await root.memory.get(cp.memory_id);
      expect(saved?.content === cp.text, "the checkpoint text is not what memory holds");
      for (const line of cp.text.split("\n").slice(0, 3)) out(`    ${line}`);
      out(`    saved to memory as ${cp.memory_id} before it was shown`);
      expect(cp.task.access_mode === "read_only" && cp.task.status === "paused", "the checkpoint did not pause the task read-only");
    } finally {
      await root.close();
    }

    out("[4] new process: resume");
    child = new ChildRpc([...selfArgv(), "serve", "--root", dir]);
    const resumed = await child.call<{ task: TaskState }>("task.resume");
    out(`    gate after resume: ${resumed.task.access_mode}; turn: ${resumed.task.turn_index}`);
    expect(resumed.task.turn_index === 2 && resumed.task.access_mode === "read_only", "resume did not start turn 2 read-only");
    try {
      await child.call("writes.require", { action: "write after resume" });
      throw new DemoFailure("the lease of turn 1 survived the resume");
    } catch (e) {
      if (!(e instanceof RpcCallError) || e.kind !== "write_gate_violation") throw e;
      out(`    gate: ${e.message}`);
      out("    expected: the write lease does not survive resume");
    }

    out("[5] re-authorize for the new turn, then finish");
    await child.call("writes.enable", { reason: "continue in turn 2" });
    await child.call("writes.require", { action: "write after re-authorization" });
    const fin = await child.call<{ task: TaskState; memory_id: string }>("task.finish", { summary: "demo complete" });
    out(`    status: ${fin.task.status}; memory: ${fin.memory_id}`);
    expect(fin.task.status === "completed" && fin.memory_id === "S_0002", "finish did not complete the task with memory S_0002");
    const code = await child.close();
    child = null;
    expect(code === 0, `the serve process exited with ${code}`);

    out("OK: checkpoint -> resume -> single-turn write lease -> finish");
    return 0;
  } catch (e) {
    out(`FAIL: ${e instanceof DemoFailure ? e.message : (e as Error).stack ?? String(e)}`);
    return 1;
  } finally {
    if (child) await child.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}
