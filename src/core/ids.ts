/**
 * The ledger's public ids: a prefix and a zero-padded sequence number (`R_0001`, `RC_0002`, …),
 * formatted and parsed here only, so every layer reads the same ids the same way.
 */
import { NotFoundError } from "./errors.ts";

export const prefixed = (prefix: string) => ({
  format: (seq: number) => `${prefix}_${String(seq).padStart(4, "0")}`,
  parse: (id: string): number | null => {
    const m = new RegExp(`^${prefix}_(\\d{1,15})$`).exec(id);
    return m ? Number(m[1]) : null;
  },
});

export const RUN_ID = prefixed("R");
export const RECEIPT_ID = prefixed("RC");
export const ADJUSTMENT_ID = prefixed("ADJ");
export const CONTEXT_ID = prefixed("C");
export const CHARGE_ID = prefixed("CH");

/** The seq of an id, or `not_found` naming it. */
export function seqOf(kind: ReturnType<typeof prefixed>, id: string, what: string): number {
  const seq = kind.parse(id);
  if (seq === null) throw new NotFoundError(what, id);
  return seq;
}

