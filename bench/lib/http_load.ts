/**
 * A small HTTP/1.1 load generator: `connections` keep-alive TCP connections to 127.0.0.1:port,
 * each sending the same request as soon as the previous answer is complete, for `seconds`.
 * Raw sockets (Bun.connect) so the client spends as little as possible per request.
 *
 *   bun bench/lib/http_load.ts PORT SECONDS CONNECTIONS < request.txt   -> prints {"rps":…,"errors":…}
 */
export {};

const [portArg, secondsArg, connArg] = process.argv.slice(2);
const port = Number(portArg);
const seconds = Number(secondsArg ?? 5);
const connections = Number(connArg ?? 16);
const request = new Uint8Array(await Bun.stdin.arrayBuffer());

let done = 0;
let errors = 0;
let stopping = false;
const decoder = new TextDecoder();

function open(): Promise<void> {
  return new Promise((resolve) => {
    let buf = "";
    void Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(s) {
          s.write(request);
        },
        data(s, chunk) {
          buf += decoder.decode(chunk);
          for (;;) {
            const end = buf.indexOf("\r\n\r\n");
            if (end < 0) return;
            const head = buf.slice(0, end);
            const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
            if (buf.length < end + 4 + len) return; // bodies are ASCII JSON: chars = bytes
            if (!head.startsWith("HTTP/1.1 200")) errors++;
            buf = buf.slice(end + 4 + len);
            done++;
            if (stopping) {
              s.end();
              resolve();
              return;
            }
            s.write(request);
          }
        },
        close() {
          resolve();
        },
        error() {
          errors++;
          resolve();
        },
      },
    });
  });
}

const t0 = performance.now();
const all = Array.from({ length: connections }, open);
setTimeout(() => {
  stopping = true;
}, seconds * 1000);
await Promise.all(all);
const elapsed = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ rps: Math.round(done / elapsed), requests: done, errors }));
