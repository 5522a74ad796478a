/**
 * The hook events table (src/hooks/events.ts) and the places that read it: install's settings, the
 * hook command's deadlines and the adapter's handlers all say what the table says.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as claude from "../../src/hooks/claude.ts";
import { DEADLINE_MS } from "../../src/hooks/command.ts";
import { CLAUDE_EVENTS, HOOK_EVENTS, type HookEvent } from "../../src/hooks/events.ts";
import { HOOK_TIMEOUTS, withLongrunHooks } from "../../src/hooks/install_settings.ts";

const rows = CLAUDE_EVENTS.map((e) => [e, HOOK_EVENTS[e] as HookEvent] as const);

describe("the hook events table", () => {
  test("lists the five events longrun answers, in install's order", () => {
    assert.deepEqual([...CLAUDE_EVENTS], ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"]);
    assert.deepEqual(claude.CLAUDE_EVENTS, CLAUDE_EVENTS);
  });

  for (const [event, row] of rows) {
    test(`${event}: answered by claude.ts ${row.handler}, within its deadline, well inside the installed timeout`, () => {
      assert.equal(typeof (claude as Record<string, unknown>)[row.handler], "function");
      assert.equal(DEADLINE_MS[event], row.deadlineMs, "command.ts's deadline is the table's");
      assert.equal(HOOK_TIMEOUTS[event], row.timeoutSeconds);
      assert.equal(claude.LOCK_WAIT_MS[event], row.lockWaitMs);
      assert.ok(row.lockWaitMs < row.deadlineMs && row.deadlineMs <= (row.timeoutSeconds * 1000) / 2, "a lock wait fits the deadline, and the deadline half the timeout");
      assert.equal(row.sample.hook_event_name, event);
    });
  }

  test("install registers each event as the table says: matcher, timeout, and blocking on failure", () => {
    const s = withLongrunHooks({}, ["/opt/longrun"], "/r") as { hooks: Record<string, { matcher?: string; hooks: { timeout?: number; onFailure?: string; command: string }[] }[]> };
    assert.deepEqual(Object.keys(s.hooks), [...CLAUDE_EVENTS]);
    for (const [event, row] of rows) {
      const [group, ...more] = s.hooks[event]!;
      assert.equal(more.length, 0);
      assert.equal(group!.matcher, row.matcher);
      assert.equal(group!.hooks[0]!.timeout, row.timeoutSeconds);
      assert.equal(group!.hooks[0]!.onFailure, row.blocking ? "block" : undefined);
      assert.equal(group!.hooks[0]!.command, `/opt/longrun hook claude ${event} --root /r`);
    }
  });
});
