/**
 * Ends the whole process with a status, from any thread, at once: a Worker's `process.exit` ends
 * only the Worker, and a main thread busy in synchronous code never runs its timers. Used by the
 * hook's watchdog (src/hooks/watchdog.ts), so a decision that takes too long is still a deny.
 *
 * It calls the C library's `_exit` through the runtime's FFI (Bun's `bun:ffi`, Deno's
 * `Deno.dlopen`); where neither can load one, it falls back to SIGKILL, which ends the process
 * with a signal instead of the status.
 */

const LIBC = {
  linux: ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"],
  darwin: ["/usr/lib/libSystem.B.dylib"],
} as const;

type Exit = (code: number) => void;

function candidates(): readonly string[] {
  return process.platform === "darwin" ? LIBC.darwin : process.platform === "linux" ? LIBC.linux : [];
}

async function bunExit(): Promise<Exit | null> {
  const ffi = await import("bun:ffi" as string).catch(() => null);
  if (!ffi) return null;
  for (const lib of candidates()) {
    try {
      const h = ffi.dlopen(lib, { _exit: { args: [ffi.FFIType.i32], returns: ffi.FFIType.void } });
      return (code) => h.symbols._exit(code);
    } catch {
      // the next name
    }
  }
  return null;
}

function denoExit(): Exit | null {
  const deno = (globalThis as { Deno?: { dlopen?: (lib: string, s: Record<string, unknown>) => { symbols: Record<string, (c: number) => void> } } }).Deno;
  if (!deno?.dlopen) return null;
  for (const lib of candidates()) {
    try {
      const h = deno.dlopen(lib, { _exit: { parameters: ["i32"], result: "void" } });
      return (code) => h.symbols._exit!(code);
    } catch {
      // the next name
    }
  }
  return null;
}

/** Loads the exit function ahead of need (loading a library is the slow part). */
export async function prepareExitNow(): Promise<Exit> {
  const native = "Bun" in globalThis ? await bunExit() : denoExit();
  return native ?? (() => process.kill(process.pid, "SIGKILL"));
}
