/**
 * A suite or test that cannot run here (or does not apply to this store) says so where the summary
 * finds it. Bun leaves a skipped `describe` out of its counts altogether, so a runner's own
 * "N skip" is not the whole truth: every skip goes through `skipped()`, which prints one line and,
 * under `npm test` (scripts/test.sh sets LONGRUN_SKIP_LOG), appends it to the file the summary
 * lists at the end.
 *
 * @example
 * describe("longrun sandbox", { skip: skipped("tests/sandbox: longrun sandbox", BWRAP ? false : "bubblewrap not installed") }, () => { … });
 */
import { appendFileSync } from "node:fs";

export function skipped(what: string, reason: string | false | undefined | null): string | false {
  if (!reason) return false;
  const line = `${what}: ${reason}`;
  console.warn(`skipping ${line}`);
  const log = process.env.LONGRUN_SKIP_LOG;
  if (log) {
    try {
      appendFileSync(log, `${line}\n`);
    } catch {
      // the summary then lacks this line; the runner's own output still has it
    }
  }
  return reason;
}

/** For a skip decided inside a test body (`t.skip(reason)`): records it the same way, then skips. */
export function skipTest(t: { skip: (message?: string) => void }, what: string, reason: string): void {
  skipped(what, reason);
  t.skip(reason);
}
