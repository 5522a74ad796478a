/**
 * The reference process for bench/stdio_roundtrip.py: the least a JSON-RPC stdio server can do over
 * longrun's own framing. It is `serveStdio` (src/stdio/server.ts) wired exactly as `longrun serve`
 * wires it (src/cli/serve.ts: the same stdin source, the same LineFramer, the same writes), with a
 * dispatcher that answers every line with its id and does nothing else. So the echo pays for the
 * same way of reading stdin as the server, and nothing the server does not pay; keep the `input`
 * and `output` below the same as serve.ts's when that changes.
 * Build (bench/stdio_roundtrip.py does it, the way scripts/compile.ts builds longrun):
 *   node_modules/.bin/bun bench/lib/compile_like.ts bench/echo.ts dist/bench-echo
 */
import type { Dispatcher } from "../src/rpc/dispatcher.ts";
import { serveStdio } from "../src/stdio/server.ts";

const echo = {
  handleText(line: string): Promise<string | null> {
    let id: unknown = null;
    try {
      id = (JSON.parse(line) as { id?: unknown }).id ?? null;
    } catch {
      // answer with id null, as a server would for a parse error
    }
    return Promise.resolve(JSON.stringify({ jsonrpc: "2.0", id, result: { ok: true } }));
  },
} as unknown as Dispatcher;

// No top-level await: the build is CommonJS, like longrun's.
void serveStdio({ dispatcher: echo, input: process.stdin, output: process.stdout }).then(() => process.exit(0));
