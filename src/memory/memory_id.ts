/** A memory record's id: `S_` and its row's seq, at least four digits (`S_0001`). */
export function memoryId(seq: number): string {
  return "S_" + String(seq).padStart(4, "0");
}

/** The seq of a memory id, or null when it is not one. */
export function parseMemoryId(id: string): number | null {
  const m = /^S_(\d{1,15})$/.exec(id);
  return m ? Number(m[1]) : null;
}
