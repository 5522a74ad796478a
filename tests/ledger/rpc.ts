/** An in-process dispatcher on a real root, for ledger behaviour tests: the protocol's validation included. */
import type { Clock } from "../../src/core/ports.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import type { Side } from "../../src/rpc/method.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { startSqld, TEST_STORE } from "../support/sqld.ts";

export interface RpcError {
  code: number;
  message: string;
  data: Record<string, any>;
}

/**
 * Methods the fixture calls as the host unless a side is given: it stands for a host driving the
 * ledger, so its runs are granted when they start (an agent-side start is a request: pass "agent").
 */
const HOST_BY_DEFAULT = new Set(["run.start", "run.continue"]);

export class RpcFixture {
  readonly dir = tempDir();
  /** Under LONGRUN_TEST_STORE=sqld, the root is on a libSQL server of its own (tests/support/sqld.ts). */
  readonly #server = TEST_STORE === "sqld" ? startSqld() : null;
  readonly roots: RootRegistry;
  #d: Promise<Dispatcher>;
  #id = 1;

  /** `options.clock`: the roots' clock (what every row records, and what liveness is computed from). */
  constructor(options: { clock?: Clock } = {}) {
    const rootOptions = { searchInWorker: false, ...(options.clock ? { clock: options.clock } : {}) };
    this.roots = new RootRegistry({ defaultRoot: this.dir, rootOptions });
    this.#d = this.#server
      ? this.#server.then((s) => new Dispatcher({ methods: allMethods(), roots: new RootRegistry({ defaultRoot: null, server: { url: s.url, project: "test", stateDir: this.dir }, rootOptions }) }))
      : Promise.resolve(new Dispatcher({ methods: allMethods(), roots: this.roots }));
  }

  /** The dispatcher the calls go through (for what reads through it, such as the status page's snapshot). */
  dispatcher(): Promise<Dispatcher> {
    return this.#d;
  }

  /** The root the calls go to (local, or on the server). */
  async root() {
    return (await this.#d).roots.get();
  }

  async call(method: string, params: Record<string, unknown> = {}, side?: Side): Promise<{ result?: any; error?: RpcError }> {
    const by: Side = side ?? (HOST_BY_DEFAULT.has(method) ? "host" : "agent");
    return (await (await this.#d).handleMessage({ jsonrpc: "2.0", id: this.#id++, method, params }, { side: by, via: "test" })) as { result?: any; error?: RpcError };
  }

  async ok(method: string, params: Record<string, unknown> = {}, side?: Side): Promise<any> {
    const a = await this.call(method, params, side);
    if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error)}`);
    return a.result;
  }

  async fail(method: string, params: Record<string, unknown> = {}, side?: Side): Promise<RpcError> {
    const a = await this.call(method, params, side);
    if (!a.error) throw new Error(`${method} unexpectedly succeeded: ${JSON.stringify(a.result)}`);
    return a.error;
  }

  async close(): Promise<void> {
    await this.roots.closeAll();
    if (this.#server) {
      await (await this.#d).roots.closeAll();
      await (await this.#server).stop();
    }
    removeDir(this.dir);
  }
}
