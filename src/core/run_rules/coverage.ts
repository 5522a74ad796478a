/**
 * Coverage of an externalised context: which byte ranges have been read. A partial read is never
 * reported as whole: `complete` is true only when the merged ranges cover [0, size). Pure.
 */

export type Range = [start: number, end: number];

/** Merges half-open ranges into sorted, disjoint ones. */
export function mergeRanges(ranges: readonly Range[]): Range[] {
  const sorted = ranges.filter(([s, e]) => e > s).map(([s, e]) => [s, e] as Range).sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

export interface Coverage {
  size: number;
  bytes_read: number;
  ranges: Range[];
  complete: boolean;
}

export function coverage(size: number, reads: readonly Range[]): Coverage {
  const ranges = mergeRanges(reads.map(([s, e]) => [Math.max(0, s), Math.min(size, e)] as Range));
  const bytes = ranges.reduce((n, [s, e]) => n + (e - s), 0);
  return { size, bytes_read: bytes, ranges, complete: size === 0 ? true : bytes === size };
}
