/** A clock the test moves by hand (a root's `options.clock`): what every row records, and what liveness and retention are computed from. */
export class TestClock {
  #t: number;
  constructor(start: string | number = "2026-12-02T09:00:00Z") {
    this.#t = typeof start === "number" ? start : Date.parse(start);
  }
  now(): Date {
    return new Date(this.#t);
  }
  advance(seconds: number): void {
    this.#t += seconds * 1000;
  }
}
