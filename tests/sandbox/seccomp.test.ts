/** The sandbox's seccomp filter, run in process by a small classic-BPF interpreter on made-up system calls. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seccompProgram } from "../../src/sandbox/seccomp.ts";

const ALLOW = 0x7fff0000;
const ERRNO = 0x00050000;

/** Runs a `struct sock_filter[]` program over one `struct seccomp_data` (nr, arch, args[0]). */
function decide(program: Uint8Array, nr: number, arch: number, arg0 = 0): number {
  const view = new DataView(program.buffer, program.byteOffset, program.byteLength);
  const data = new DataView(new ArrayBuffer(64));
  data.setUint32(0, nr, true);
  data.setUint32(4, arch, true);
  data.setUint32(16, arg0, true);
  let acc = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = view.getUint16(pc * 8, true);
    const jt = view.getUint8(pc * 8 + 2);
    const jf = view.getUint8(pc * 8 + 3);
    const k = view.getUint32(pc * 8 + 4, true);
    if (code === 0x20) acc = data.getUint32(k, true);
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error("the program fell off its end");
}

const MACHINES = [
  { arch: "x86_64", audit: 0xc000003e, socket: 41, openat: 257, foreign: 0x40000003 },
  { arch: "aarch64", audit: 0xc00000b7, socket: 198, openat: 56, foreign: 0x40000028 },
];

describe("the sandbox's seccomp filter", () => {
  for (const m of MACHINES) {
    const program = seccompProgram(m.arch)!;
    test(`${m.arch}: socket(AF_UNIX) is refused (EAFNOSUPPORT), socket(AF_INET) and other calls pass`, () => {
      assert.equal(program.length % 8, 0);
      assert.equal(decide(program, m.socket, m.audit, 1), ERRNO | 97);
      assert.equal(decide(program, m.socket, m.audit, 2), ALLOW);
      assert.equal(decide(program, m.openat, m.audit), ALLOW);
    });
    test(`${m.arch}: io_uring_setup and another ABI's calls are refused`, () => {
      assert.equal(decide(program, 425, m.audit), ERRNO | 1);
      assert.equal(decide(program, 1, m.foreign), ERRNO | 1);
    });
  }
  test("x86_64: x32 system calls are refused", () => {
    assert.equal(decide(seccompProgram("x86_64")!, 0x40000000 + 41, 0xc000003e, 1), ERRNO | 1);
  });
  test("a machine it has no numbers for gets no filter (the sandbox then refuses to run)", () => {
    assert.equal(seccompProgram("riscv64"), null);
  });
});
