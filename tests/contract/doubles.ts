/**
 * Test doubles, named as such. Each wraps a real store and changes exactly one thing:
 * RecordingMemory records the order of memory calls; FailingMemory makes saves throw while
 * `failing` is set (the injected failure); FailingPendingWrites makes the pending checkpoint file
 * unwritable. `intercept` is how the memory doubles also see the saves that commit together with a
 * state change (see `contractWith`).
 */
import type { MemoryStore, NewMemory, PendingStore, SearchOptions } from "../../src/core/ports.ts";

export class RecordingMemory implements MemoryStore {
  readonly calls: { op: string; stateExisted: boolean | null }[] = [];
  /** `hasState` tells, when asked, whether a task state exists yet (read where it is stored). */
  constructor(private readonly inner: MemoryStore, private readonly hasState: () => Promise<boolean>) {}
  #note(op: string) {
    const call: { op: string; stateExisted: boolean | null } = { op, stateExisted: null };
    this.calls.push(call);
    // a save inside a state transaction must not read the state (it would wait on that transaction)
    if (op !== "save") void this.hasState().then((b) => (call.stateExisted = b));
  }
  async search(q: string | readonly string[], o?: SearchOptions) {
    this.calls.push({ op: "search", stateExisted: await this.hasState() });
    return this.inner.search(q, o);
  }
  intercept(_r: NewMemory) {
    this.#note("save");
  }
  save(r: NewMemory) {
    this.intercept(r);
    return this.inner.save(r);
  }
  get(id: string) {
    this.#note("get");
    return this.inner.get(id);
  }
  forget(ids: readonly string[], by: string, reason: string | null) {
    this.#note("forget");
    return this.inner.forget(ids, by, reason);
  }
  update(id: string, change: { content: string; title?: string; keywords?: string[] }) {
    this.#note("update");
    return this.inner.update(id, change);
  }
  recent(t: string, n: number) {
    this.#note("recent");
    return this.inner.recent(t, n);
  }
  stateRecords(n: number) {
    this.#note("stateRecords");
    return this.inner.stateRecords(n);
  }
  checkpointRecords(t: string, n: number, below?: string) {
    this.#note("checkpointRecords");
    return this.inner.checkpointRecords(t, n, below);
  }
  checkpointRecord(id: string) {
    this.#note("checkpointRecord");
    return this.inner.checkpointRecord(id);
  }
}

export class FailingMemory implements MemoryStore {
  failing = true;
  saveAttempts = 0;
  constructor(private readonly inner: MemoryStore) {}
  search(q: string | readonly string[], o?: SearchOptions) {
    return this.inner.search(q, o);
  }
  intercept(_r: NewMemory) {
    this.saveAttempts++;
    if (this.failing) throw new Error("injected failure: memory database unavailable");
  }
  save(r: NewMemory) {
    try {
      this.intercept(r);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.inner.save(r);
  }
  get(id: string) {
    return this.inner.get(id);
  }
  forget(ids: readonly string[], by: string, reason: string | null) {
    return this.inner.forget(ids, by, reason);
  }
  update(id: string, change: { content: string; title?: string; keywords?: string[] }) {
    return this.inner.update(id, change);
  }
  recent(t: string, n: number) {
    return this.inner.recent(t, n);
  }
  stateRecords(n: number) {
    return this.inner.stateRecords(n);
  }
  checkpointRecords(t: string, n: number, below?: string) {
    return this.inner.checkpointRecords(t, n, below);
  }
  checkpointRecord(id: string) {
    return this.inner.checkpointRecord(id);
  }
}

/**
 * Failure-injection double for the pending-checkpoint port: the real file store, except that
 * `write` throws (the disk refusing the pending file). Everything else reaches the real store.
 */
export class FailingPendingWrites {
  writeAttempts = 0;
  constructor(readonly inner: PendingStore) {}
  asPort(): PendingStore {
    return new Proxy(this.inner, {
      get: (t, k) => {
        if (k === "write") {
          return () => {
            this.writeAttempts++;
            return Promise.reject(new Error("injected failure: the pending checkpoint file cannot be written (disk full)"));
          };
        }
        const v = Reflect.get(t, k, t);
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
  }
}
