/**
 * The reference server for bench/http_throughput.ts: bare `Bun.serve` on 127.0.0.1 that reads a
 * POST body and answers with the fixed JSON given in LONGRUN_BENCH_BODY (the same bytes longrun
 * answers), with the same content type. Prints its port on stdout.
 */
const body = process.env.LONGRUN_BENCH_BODY ?? '{"jsonrpc":"2.0","id":1,"result":{}}';
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    await req.text();
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
});
console.log(server.port);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
