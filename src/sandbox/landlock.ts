/**
 * Landlock, Linux's unprivileged sandbox, reached through Bun's FFI: the boundary `longrun
 * sandbox` narrows to where bubblewrap cannot make namespaces — inside Claude Code's own sandbox,
 * whose seccomp filter forbids nested user namespaces, but which already hides longrun's files
 * behind its mounts. A Landlock domain applies to the thread that makes it and to everything it
 * starts afterwards, and can only ever be narrowed, never widened.
 *
 * What it enforces here: no file is created, written, truncated, renamed or removed outside the
 * directories given (the scratch directory; the root too under a lease); no TCP connect or bind
 * (ABI 4); no abstract unix socket or signal to a process outside the domain (ABI 6). Reads are
 * restricted only when the caller names what stays readable (`readable`).
 */

/** Landlock's file-system rights (include/uapi/linux/landlock.h). */
const FS = {
  EXECUTE: 1n << 0n,
  WRITE_FILE: 1n << 1n,
  READ_FILE: 1n << 2n,
  READ_DIR: 1n << 3n,
  REMOVE_DIR: 1n << 4n,
  REMOVE_FILE: 1n << 5n,
  MAKE_CHAR: 1n << 6n,
  MAKE_DIR: 1n << 7n,
  MAKE_REG: 1n << 8n,
  MAKE_SOCK: 1n << 9n,
  MAKE_FIFO: 1n << 10n,
  MAKE_BLOCK: 1n << 11n,
  MAKE_SYM: 1n << 12n,
  REFER: 1n << 13n, // ABI 2
  TRUNCATE: 1n << 14n, // ABI 3
} as const;

const NET_BIND_TCP = 1n << 0n;
const NET_CONNECT_TCP = 1n << 1n;
const SCOPE_ABSTRACT_UNIX_SOCKET = 1n << 0n;
const SCOPE_SIGNAL = 1n << 1n;

// the same numbers on x86_64 and arm64 (the generic syscall table)
const SYS = { create: 444n, add: 445n, restrict: 446n } as const;
const PR_SET_NO_NEW_PRIVS = 38;
const O_PATH = 0o10000000;
const ENOENT = 2;
const O_CLOEXEC = 0o2000000;
const LANDLOCK_RULE_PATH_BENEATH = 1n;
const LANDLOCK_CREATE_RULESET_VERSION = 1n;

/** The rights a write needs, by the ABI that introduced them. */
export function writeRights(abi: number): bigint {
  let r = FS.WRITE_FILE | FS.REMOVE_DIR | FS.REMOVE_FILE | FS.MAKE_CHAR | FS.MAKE_DIR | FS.MAKE_REG | FS.MAKE_SOCK | FS.MAKE_FIFO | FS.MAKE_BLOCK | FS.MAKE_SYM;
  if (abi >= 2) r |= FS.REFER;
  if (abi >= 3) r |= FS.TRUNCATE;
  return r;
}

interface Libc {
  syscall(n: bigint, a: bigint, b: bigint, c: bigint, d: bigint): bigint;
  prctl(option: number, a: bigint, b: bigint, c: bigint, d: bigint): number;
  open(path: unknown, flags: number): number;
  close(fd: number): number;
  ptr(buf: ArrayBufferView): bigint;
  errno(): number;
}

async function libc(): Promise<Libc | null> {
  if (process.platform !== "linux" || !("Bun" in globalThis)) return null;
  if (process.arch !== "x64" && process.arch !== "arm64") return null;
  const ffi = await import("bun:ffi" as string).catch(() => null);
  if (!ffi) return null;
  const { FFIType: T, dlopen, ptr, read } = ffi;
  for (const name of ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
    try {
      const h = dlopen(name, {
        syscall: { args: [T.i64, T.i64, T.i64, T.i64, T.i64], returns: T.i64 },
        prctl: { args: [T.i32, T.u64, T.u64, T.u64, T.u64], returns: T.i32 },
        open: { args: [T.ptr, T.i32], returns: T.i32 },
        close: { args: [T.i32], returns: T.i32 },
        __errno_location: { args: [], returns: T.ptr },
      });
      const s = h.symbols;
      return {
        syscall: (n, a, b, c, d) => s.syscall(n, a, b, c, d) as bigint,
        prctl: (o, a, b, c, d) => s.prctl(o, a, b, c, d) as number,
        open: (p, f) => s.open(p, f) as number,
        close: (fd) => s.close(fd) as number,
        ptr: (buf) => BigInt(ptr(buf)),
        errno: () => read.i32(s.__errno_location(), 0) as number,
      };
    } catch {
      // the next name
    }
  }
  return null;
}

const PR_SET_CHILD_SUBREAPER = 36;

/**
 * Makes this process the reaper of everything it starts: a process whose parent dies is handed to
 * it, not to init, so that `killDescendants` finds it. False where that cannot be set.
 */
export async function becomeSubreaper(): Promise<boolean> {
  const c = await libc();
  return c !== null && c.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) === 0;
}

/** The Landlock ABI this kernel offers (0: none, or this runtime cannot ask). */
export async function landlockAbi(): Promise<number> {
  const c = await libc();
  if (!c) return 0;
  const v = Number(c.syscall(SYS.create, 0n, 0n, LANDLOCK_CREATE_RULESET_VERSION, 0n));
  return v > 0 ? v : 0;
}

export interface LandlockPolicy {
  /** Directories (and what lies beneath them) where writes stay allowed. */
  writable: readonly string[];
  /** Files where writes stay allowed (`/dev/null`, `/dev/tty`). */
  writableFiles: readonly string[];
  /**
   * When given, reading and running files is restricted too: allowed only beneath these paths
   * (and the writable ones). Directories stay listable everywhere.
   */
  readable?: readonly string[];
  /** Directories where only empty directories may be removed (the parent of the caller's own work directory, to clean up after). */
  removableDirsIn?: readonly string[];
}

export type LandlockResult = { ok: true; abi: number; net: boolean; scoped: boolean } | { ok: false; reason: string };

/**
 * Restricts this thread, and whatever it starts from now on, to the policy. Irreversible. Every
 * path must exist; one that cannot be opened fails the whole call (nothing is half-applied: the
 * domain is made only after every rule was added).
 */
export async function restrictSelf(policy: LandlockPolicy): Promise<LandlockResult> {
  const c = await libc();
  if (!c) return { ok: false, reason: "Landlock is reached through Bun's FFI on Linux, which this process does not have" };
  const abi = Number(c.syscall(SYS.create, 0n, 0n, LANDLOCK_CREATE_RULESET_VERSION, 0n));
  if (abi < 1) return { ok: false, reason: `this kernel does not offer Landlock (errno ${c.errno()})` };
  const reads = FS.READ_FILE | FS.EXECUTE;
  const handled = writeRights(abi) | (policy.readable ? reads : 0n);
  const net = abi >= 4;
  const scoped = abi >= 6;
  // struct landlock_ruleset_attr { u64 handled_access_fs; u64 handled_access_net; u64 scoped; }
  const attr = new BigUint64Array([handled, net ? NET_BIND_TCP | NET_CONNECT_TCP : 0n, scoped ? SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL : 0n]);
  const size = abi >= 6 ? 24n : abi >= 4 ? 16n : 8n;
  const rs = Number(c.syscall(SYS.create, c.ptr(attr), size, 0n, 0n));
  if (rs < 0) return { ok: false, reason: `landlock_create_ruleset failed (errno ${c.errno()})` };
  try {
    const fileWrite = FS.WRITE_FILE | (abi >= 3 ? FS.TRUNCATE : 0n) | (policy.readable ? FS.READ_FILE : 0n);
    // a readable entry may vanish between the listing and its rule: it then needs none (what comes
    // back there later stays unreadable, the safe side)
    const rules: [string, bigint, boolean][] = [
      ...policy.writable.map((d) => [d, handled, false] as [string, bigint, boolean]),
      ...policy.writableFiles.map((f) => [f, fileWrite, false] as [string, bigint, boolean]),
      ...(policy.readable ?? []).map((r) => [r, reads, true] as [string, bigint, boolean]),
      ...(policy.removableDirsIn ?? []).map((d) => [d, FS.REMOVE_DIR, false] as [string, bigint, boolean]),
    ];
    for (const [path, rights, optional] of rules) {
      const fd = c.open(c.ptr(new TextEncoder().encode(path + "\0")) as unknown, O_PATH | O_CLOEXEC);
      if (fd < 0 && optional && c.errno() === ENOENT) continue;
      if (fd < 0) return { ok: false, reason: `cannot open ${path} for a Landlock rule (errno ${c.errno()})` };
      // struct landlock_path_beneath_attr { u64 allowed_access; s32 parent_fd; } __attribute__((packed))
      const rule = new DataView(new ArrayBuffer(12));
      rule.setBigUint64(0, rights, true);
      rule.setInt32(8, fd, true);
      const added = c.syscall(SYS.add, BigInt(rs), LANDLOCK_RULE_PATH_BENEATH, c.ptr(new Uint8Array(rule.buffer)), 0n);
      const err = c.errno();
      c.close(fd);
      if (added !== 0n) return { ok: false, reason: `landlock_add_rule for ${path} failed (errno ${err})` };
    }
    if (c.prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) return { ok: false, reason: `prctl(PR_SET_NO_NEW_PRIVS) failed (errno ${c.errno()})` };
    if (c.syscall(SYS.restrict, BigInt(rs), 0n, 0n, 0n) !== 0n) return { ok: false, reason: `landlock_restrict_self failed (errno ${c.errno()})` };
    return { ok: true, abi, net, scoped };
  } finally {
    c.close(rs);
  }
}
