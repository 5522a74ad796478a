/**
 * A bounded, seeded fuzz of the compiled binary's two doors (tests/faults/fuzz_lib.ts; longer runs:
 * bench/fuzz.ts): mutated and random JSON-RPC lines to one `longrun serve` over stdio, and mutated
 * and garbage payloads to `longrun hook claude <Event>` processes. The server never dies, answers
 * exactly what the JSON-RPC rules say is due (one answer per request with an id, none for a
 * notification, one array per batch), never with -32603 `internal`, and keeps its memory bounded;
 * a hook always ends with a decision, never "allow", and garbage never passes a read-only turn.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { readTask } from "../support/state.ts";
import { formatHookReport, formatRpcReport, fuzzHooks, fuzzRpc } from "./fuzz_lib.ts";

const SEED = 1130;

/**
 * -32603 answers already reported as open bugs, by message. Each is listed in the test's output but
 * does not fail it; delete an entry once its bug is fixed, so the fuzz guards the fix. (Empty: the
 * one found, artifact.put with two attachments of the same name, is invalid_params now and stays
 * one of the fixed cases.)
 */
const KNOWN_INTERNAL: RegExp[] = [];

test("JSON-RPC fuzz over stdio: every request answered as the rules say, never internal, the server lives, memory bounded", async () => {
  requireBinary();
  const root = tempDir("longrun-fuzz-");
  try {
    const rep = await fuzzRpc({ binary: BINARY, root, seed: SEED, count: 2000 });
    const text = formatRpcReport(rep, SEED);
    assert.deepEqual(rep.violations, [], text);
    const known = rep.internal.filter((x) => KNOWN_INTERNAL.some((k) => k.test(x.message)));
    if (known.length) console.log(`fuzz: ${known.length} answer(s) of known open bugs (-32603):\n  ${[...new Set(known.map((x) => x.input))].slice(0, 3).join("\n  ")}`);
    assert.deepEqual(rep.internal.filter((x) => !known.includes(x)), [], text);
    assert.ok(rep.serverAlive, text);
    assert.ok(rep.responses === rep.requestsWithId && rep.requestsWithId > 2000, text);
    // the fixed cases hold a few 1 MiB lines; what the random ones add must stay small
    assert.ok(rep.rssKb.after - rep.rssKb.before < 150_000, text);
  } finally {
    removeDir(root);
  }
});

test("hook fuzz: every hook process ends with a decision, never allow; garbage never passes a read-only turn", async () => {
  requireBinary();
  const root = tempDir("longrun-fuzz-hooks-");
  try {
    const rep = await fuzzHooks({ binary: BINARY, root, seed: SEED, gateCount: 100, eventCount: 40, readTask });
    const text = formatHookReport(rep, SEED);
    // findings were the gate's soft spots (a pathless call from a working directory inside
    // .longrun/, a Read without file_path): fixed, so now they fail the test like violations
    assert.deepEqual(rep.findings, [], text);
    assert.deepEqual(rep.violations, [], text);
    assert.ok((rep.outcomes["gate deny"] ?? 0) > 0, text);
  } finally {
    removeDir(root);
  }
});
