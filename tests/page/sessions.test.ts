/** The status page's login codes and sessions: a code works once, a session needs its cookie and its key. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PAGE_LIMITS, PageSessions } from "../../src/http/page/sessions.ts";

describe("status page sessions", () => {
  test("a login code opens one session for its side, and works only once", () => {
    const s = new PageSessions();
    const code = s.mint("host");
    const session = s.redeem(code);
    assert.ok(session);
    assert.equal(session.side, "host");
    assert.equal(s.redeem(code), null, "a second use of the same code");
    assert.equal(s.sideOf(session.id, session.key), "host");
  });

  test("a session is refused without its key, with another session's key, or with a made-up cookie", () => {
    const s = new PageSessions();
    const a = s.redeem(s.mint("host"))!;
    const b = s.redeem(s.mint("agent"))!;
    assert.equal(s.sideOf(a.id, undefined), null);
    assert.equal(s.sideOf(a.id, ""), null);
    assert.equal(s.sideOf(a.id, b.key), null, "the agent's key with the host's cookie");
    assert.equal(s.sideOf(b.id, a.key), null);
    assert.equal(s.sideOf("x".repeat(43), a.key), null);
    assert.equal(s.sideOf(a.key, a.id), null, "cookie and key swapped");
    assert.equal(s.sideOf(b.id, b.key), "agent");
  });

  test("a minted code expires; the code printed at start does not, but still works once", () => {
    let now = 1_000_000;
    const s = new PageSessions(() => now);
    const minted = s.mint("host");
    const start = s.mint("host", null);
    now += PAGE_LIMITS.code_ttl_seconds * 1000;
    assert.equal(s.redeem(minted), null);
    now += 365 * 24 * 3600 * 1000;
    assert.ok(s.redeem(start));
    assert.equal(s.redeem(start), null);
  });

  test("codes of one side are bounded: minting more drops the oldest, never the other side's", () => {
    const s = new PageSessions();
    const hostCode = s.mint("host");
    const agentCodes = Array.from({ length: PAGE_LIMITS.codes_per_side + 1 }, () => s.mint("agent"));
    assert.equal(s.redeem(agentCodes[0]!), null, "the oldest agent code was dropped");
    assert.ok(s.redeem(agentCodes.at(-1)!));
    assert.equal(s.redeem(hostCode)?.side, "host");
  });

  test("sessions are bounded per side (the agent's logins never end the host's) and end after a day unused; ending one needs its key", () => {
    let now = 0;
    const s = new PageSessions(() => now);
    const host = s.redeem(s.mint("host"))!;
    const firstAgent = s.redeem(s.mint("agent"))!;
    for (let i = 0; i < PAGE_LIMITS.sessions_per_side; i++) s.redeem(s.mint("agent"));
    assert.equal(s.sideOf(firstAgent.id, firstAgent.key), null, "the side's oldest session made room");
    assert.equal(s.sideOf(host.id, host.key), "host", "the agent's logins did not end the host's session");
    const idle = s.redeem(s.mint("host"))!;
    now += PAGE_LIMITS.session_idle_seconds * 1000 + 1;
    assert.equal(s.sideOf(idle.id, idle.key), null);
    const ended = s.redeem(s.mint("host"))!;
    assert.equal(s.end(ended.id, null), false, "the cookie alone ends nothing");
    assert.equal(s.end(ended.id, firstAgent.key), false, "nor with another session's key");
    assert.equal(s.sideOf(ended.id, ended.key), "host");
    assert.equal(s.end(ended.id, ended.key), true);
    assert.equal(s.sideOf(ended.id, ended.key), null);
  });

  test("garbage never matches (and is not hashed): wrong shapes, a code used as a cookie", () => {
    const s = new PageSessions();
    const code = s.mint("host");
    assert.equal(s.sideOf(code, code), null);
    for (const bad of ["", "a", "../../etc", "x".repeat(44), "=".repeat(43)]) assert.equal(s.redeem(bad), null);
    assert.equal(s.redeem(code)?.side, "host", "the real code still works after the garbage");
  });
});
