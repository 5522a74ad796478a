/**
 * The reference process for bench/stdio_roundtrip.py: the least a JSON-RPC stdio server can do.
 * Reads newline-delimited JSON from stdin, answers each line with a response carrying its id.
 * Same I/O path as `longrun serve` (node:process stdin "data" events, process.stdout.write).
 * Build: node_modules/.bin/bun build --compile bench/echo.ts --outfile dist/bench-echo
 */
let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  buffered += chunk;
  for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() === "") continue;
    let id: unknown = null;
    try {
      id = JSON.parse(line).id ?? null;
    } catch {
      // answer with id null, as a server would for a parse error
    }
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: { ok: true } }) + "\n");
  }
});
process.stdin.on("end", () => process.exit(0));
