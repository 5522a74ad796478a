import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Frame, jsonDepth, LineFramer } from "../../src/rpc/framing.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const lines = (frames: Frame[]) => frames.map((f) => (f.kind === "line" ? f.text : f.kind));

describe("stdio framing", () => {
  test("a message split byte by byte comes out whole, once", () => {
    const f = new LineFramer(1024);
    const bytes = enc('{"a":"接口"}\n');
    const out: Frame[] = [];
    for (const b of bytes) out.push(...f.push(new Uint8Array([b])));
    assert.deepEqual(lines(out), ['{"a":"接口"}']);
  });

  test("two messages in one chunk come out as two lines", () => {
    assert.deepEqual(lines(new LineFramer(1024).push(enc("{1}\n{2}\n"))), ["{1}", "{2}"]);
  });

  test("CRLF endings are accepted", () => {
    assert.deepEqual(lines(new LineFramer(1024).push(enc("{1}\r\n{2}\r\n"))), ["{1}", "{2}"]);
  });

  test("a last line without a newline is delivered at end of input", () => {
    const f = new LineFramer(1024);
    assert.deepEqual(lines(f.push(enc("{1}\n{2}"))), ["{1}"]);
    assert.deepEqual(lines(f.end()), ["{2}"]);
    assert.deepEqual(f.end(), []);
  });

  test("blank lines are skipped", () => {
    assert.deepEqual(lines(new LineFramer(1024).push(enc("\n  \n{1}\n"))), ["{1}"]);
  });

  test("a line at the limit passes; one byte over is reported once and the stream goes on", () => {
    const f = new LineFramer(10);
    assert.deepEqual(lines(f.push(enc("x".repeat(10) + "\n"))), ["x".repeat(10)]);
    const out = [...f.push(enc("y".repeat(6))), ...f.push(enc("y".repeat(5) + "\n{ok}\n"))];
    assert.equal(out.length, 2);
    assert.deepEqual(out[0], { kind: "too_long", bytes: 11, limit: 10 });
    assert.deepEqual(lines([out[1]!]), ["{ok}"]);
  });

  test("an over-long line spread over many chunks is discarded without being buffered", () => {
    const f = new LineFramer(100);
    let reported: Frame[] = [];
    for (let i = 0; i < 1000; i++) reported = reported.concat(f.push(enc("z".repeat(1000))));
    assert.deepEqual(reported, []);
    const end = f.push(enc("\n"));
    assert.equal(end[0]?.kind, "too_long");
    assert.equal((end[0] as { bytes: number }).bytes, 1_000_000);
  });

  test("invalid UTF-8 is reported as such, and the next line still parses", () => {
    const bad = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]);
    const out = new LineFramer(1024).push(new Uint8Array([...bad, ...enc("{ok}\n")]));
    assert.deepEqual(lines(out), ["bad_utf8", "{ok}"]);
  });

  test("a multi-byte character split across chunks is decoded correctly", () => {
    const f = new LineFramer(1024);
    const b = enc("서버\n");
    assert.deepEqual([...f.push(b.subarray(0, 2)), ...f.push(b.subarray(2))].map((x) => (x as { text: string }).text), ["서버"]);
  });

  test("jsonDepth counts nesting and ignores brackets inside strings", () => {
    assert.equal(jsonDepth('{"a":[1,{"b":2}]}'), 3);
    assert.equal(jsonDepth('{"a":"[[[[{{{{"}'), 1);
    assert.equal(jsonDepth('{"a":"\\"[[["}'), 1);
    assert.equal(jsonDepth("[".repeat(100000), 32), 33);
  });
});
