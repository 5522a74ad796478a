/**
 * The second wall: a seccomp filter (classic BPF, handed to `bwrap --seccomp FD`) that refuses
 * `socket(AF_UNIX, …)` and `io_uring_setup`. The file system is read-only, but a Unix socket on it
 * can still be connected to, and what listens there (a tmux server, an ssh or gpg agent, Docker,
 * systemd) runs outside the boundary; io_uring could open the socket without the system call the
 * filter sees. `socketpair()` stays allowed (it reaches nothing outside). System calls of another
 * ABI (i386 or x32 on x86_64) are refused whole. Pure: bytes out, no I/O.
 */

/** The machine's ABI as the kernel reports it (`uname -m`), for the filter's system call numbers. */
export type SeccompArch = "x86_64" | "aarch64";

const ARCHES: Record<SeccompArch, { audit: number; socket: number; ioUringSetup: number; x32: boolean }> = {
  x86_64: { audit: 0xc000003e, socket: 41, ioUringSetup: 425, x32: true },
  aarch64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425, x32: false },
};

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const EAFNOSUPPORT = 97;
const AF_UNIX = 1;
/** Offsets in `struct seccomp_data`: nr, arch, args[0] (its low 32 bits: both ABIs are little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0 = 16;

type Insn = [code: number, jt: number, jf: number, k: number];

/** The filter for `arch`, as `struct sock_filter[]` bytes; null for a machine it has no numbers for. */
export function seccompProgram(arch: string): Uint8Array | null {
  const a = (ARCHES as Record<string, (typeof ARCHES)[SeccompArch]>)[arch];
  if (!a) return null;
  const deny = (errno: number): Insn => [RET_K, 0, 0, RET_ERRNO | errno];
  const prog: Insn[] = [
    [LD_W_ABS, 0, 0, ARCH],
    [JEQ_K, 1, 0, a.audit], // native ABI: go on
    deny(EPERM), // another ABI: nothing
    [LD_W_ABS, 0, 0, NR],
  ];
  if (a.x32) prog.push([JGE_K, 0, 1, 0x40000000], deny(EPERM)); // x32 numbers carry this bit
  prog.push(
    [JEQ_K, 0, 1, a.ioUringSetup],
    deny(EPERM),
    [JEQ_K, 1, 0, a.socket],
    [RET_K, 0, 0, RET_ALLOW],
    [LD_W_ABS, 0, 0, ARG0],
    [JEQ_K, 0, 1, AF_UNIX],
    deny(EAFNOSUPPORT),
    [RET_K, 0, 0, RET_ALLOW],
  );
  const out = new Uint8Array(prog.length * 8);
  const view = new DataView(out.buffer);
  prog.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return out;
}
