/**
 * The last thing the assistant said, from a Claude Code transcript (JSON Lines). Claude Code
 * calls the entry format internal, so this reads defensively: the newest `assistant` entry whose
 * message has text, from the last 256 KiB of the file only; anything unreadable gives null.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

const TAIL_BYTES = 256 * 1024;

export function lastAssistantText(path: string): string | null {
  let text: string;
  try {
    // never block: a FIFO (or a device) as the transcript would hold the hook past its deadline
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return null;
      const size = st.size;
      const start = Math.max(0, size - TAIL_BYTES);
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      text = buf.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith("{")) continue;
    let entry: { type?: unknown; message?: { content?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry?.type !== "assistant") continue;
    const content = entry.message?.content;
    const said = typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content.filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text").map((b) => String((b as { text?: unknown }).text ?? "")).join("\n")
        : "";
    if (said.trim()) return said.trim();
  }
  return null;
}
