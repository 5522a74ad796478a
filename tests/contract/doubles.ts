/**
 * Test doubles for the memory port, named as such. Each wraps a real libSQL memory store and
 * changes exactly one thing: RecordingMemory records the order of calls; FailingMemory makes
 * saves throw while `failing` is set (the injected failure).
 */
import { existsSync } from "node:fs";
import type { MemoryStore, NewMemory, SearchOptions } from "../../src/core/ports.ts";

export class RecordingMemory implements MemoryStore {
  readonly calls: { op: string; stateExisted: boolean }[] = [];
  constructor(private readonly inner: MemoryStore, private readonly statePath: string) {}
  #note(op: string) {
    this.calls.push({ op, stateExisted: existsSync(this.statePath) });
  }
  search(q: string | readonly string[], o?: SearchOptions) {
    this.#note("search");
    return this.inner.search(q, o);
  }
  save(r: NewMemory) {
    this.#note("save");
    return this.inner.save(r);
  }
  get(id: string) {
    this.#note("get");
    return this.inner.get(id);
  }
  recent(t: string, n: number) {
    this.#note("recent");
    return this.inner.recent(t, n);
  }
  stateRecords(n: number) {
    this.#note("stateRecords");
    return this.inner.stateRecords(n);
  }
}

export class FailingMemory implements MemoryStore {
  failing = true;
  saveAttempts = 0;
  constructor(private readonly inner: MemoryStore) {}
  search(q: string | readonly string[], o?: SearchOptions) {
    return this.inner.search(q, o);
  }
  save(r: NewMemory) {
    this.saveAttempts++;
    if (this.failing) return Promise.reject(new Error("injected failure: memory database unavailable"));
    return this.inner.save(r);
  }
  get(id: string) {
    return this.inner.get(id);
  }
  recent(t: string, n: number) {
    return this.inner.recent(t, n);
  }
  stateRecords(n: number) {
    return this.inner.stateRecords(n);
  }
}
