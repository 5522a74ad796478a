/**
 * Where an absolute path really leads on disk (`.`, `..` and every symlink applied, /proc read as
 * the kernel reads it), and the count of disk lookups every check charges its budget with.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { PROCESS_VIEWS } from "./protect_table.ts";

let diskOps = 0;

/** Counts disk operations (all checks in this process); budgets are charged the difference. */
export function countDisk(n = 1): void {
  diskOps += n;
}

export function diskOpsSoFar(): number {
  return diskOps;
}

/**
 * Where an absolute `path` really leads: `.` and `..` applied, and every symlink on the way
 * followed, including a dangling one (a link to a file that does not exist yet is where a write
 * through it would land). Components that do not exist are kept as written.
 */
export function resolveExisting(path: string): string {
  const known = resolved.get(path);
  if (known !== undefined) return known;
  const out = resolveUncached(path);
  resolved.set(path, out);
  return out;
}

/** One gate decision resolves the same directories many times; a hook process lives for one call. */
const resolved = new Map<string, string>();

/** Forgets every path resolved so far: the resident gate, which lives for many calls, starts each from the disk. */
export function forgetResolved(): void {
  resolved.clear();
}

/**
 * Linear in the path's length: components are taken from a stack, the path so far is kept as
 * text, and once a component is missing nothing below it is looked up. Under /proc nothing is
 * resolved on disk: `/proc/self` is the process that opens the path (bash's child, not this
 * gate), so `self` and `thread-self` stay names, `..` is applied as the kernel would in procfs's
 * directories, and a process's links (cwd, root, fd, exe, …) end the walk, kept as written with
 * what follows them; the protected table refuses them for every pid.
 */
function resolveUncached(path: string): string {
  const todo = path.split("/").filter((c) => c !== "" && c !== ".").reverse();
  const out: string[] = [];
  const ends: number[] = []; // the length of `here` after each component of out
  let here = "";
  let missingFrom = Infinity; // out's length when a component was found missing
  let links = 0;
  const push = (c: string) => {
    out.push(c);
    here += "/" + c;
    ends.push(here.length);
  };
  const rest = () => here + todo.reverse().map((c) => "/" + c).join("");
  while (todo.length) {
    const c = todo.pop()!;
    if (c === "..") {
      if (out.length) {
        out.pop();
        ends.pop();
        here = here.slice(0, ends.at(-1) ?? 0);
        if (out.length <= missingFrom) missingFrom = Infinity;
      }
      continue;
    }
    if (out[0] === "proc") {
      if (out.length === 1 && c === "thread-self") {
        for (const x of ["self", "task", "thread-self"]) push(x);
        continue;
      }
      const view = (out.length === 2 || (out.length === 4 && out[2] === "task")) && PROCESS_VIEWS.includes(c);
      if (view) {
        push(c);
        return rest();
      }
      if (out.length === 1 && c !== "self" && missingFrom === Infinity) {
        // /proc's own links (net, mounts) lead into /proc/self
        const target = linkAt(`${here}/${c}`);
        if (typeof target === "string" && !target.startsWith("/") && ++links <= 40) {
          todo.push(...target.split("/").filter((x) => x !== "" && x !== ".").reverse());
          continue;
        }
      }
      push(c);
      continue;
    }
    const target = out.length < missingFrom ? linkAt(`${here}/${c}`) : null;
    if (target === undefined) {
      missingFrom = Math.min(missingFrom, out.length);
      push(c);
      continue;
    }
    if (target === null) {
      push(c);
      continue;
    }
    if (++links > 40) {
      push(c);
      return rest(); // a loop: leave it as written
    }
    if (target.startsWith("/")) {
      out.length = 0;
      ends.length = 0;
      here = "";
      missingFrom = Infinity;
    }
    todo.push(...target.split("/").filter((x) => x !== "" && x !== ".").reverse());
  }
  return here === "" ? "/" : here;
}

/** A symlink's target, null when the path is no symlink, undefined when it does not exist. */
function linkAt(path: string): string | null | undefined {
  diskOps++;
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : null;
  } catch {
    return undefined;
  }
}
