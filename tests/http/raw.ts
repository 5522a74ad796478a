/** One raw HTTP/1.1 exchange on 127.0.0.1, so a test controls every header byte (Host included). */
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  /** What follows the headers. */
  body: string;
  /** The whole response, headers included. */
  text: string;
}

/** Resolves once the whole response is in (by Content-Length), or the server closed. */
export function raw(port: number, request: string | Uint8Array): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let data = "";
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      sock.destroy();
      const head = data.indexOf("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), body: head >= 0 ? data.slice(head + 4) : "", text: data });
    };
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      data += d;
      const head = data.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(data)?.[1] ?? NaN);
      if (head >= 0 && Buffer.byteLength(data.slice(head + 4)) >= length) finish();
    });
    // The server may answer (413) and close before it has read everything we send.
    sock.on("error", (e) => (data ? finish() : done || reject(e)));
    sock.on("close", finish);
    sock.write(request);
  });
}
