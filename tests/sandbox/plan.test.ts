/** The sandbox's plan, in process: bubblewrap's arguments from a mode, a root and a made-up disk. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, test } from "node:test";
import { PROTECTED } from "../../src/hooks/protect.ts";
import { GIT_ENTRIES, ROOT_ENTRIES } from "../../src/sandbox/layout.ts";
import { BASE_ARGS, type Kind, type PlanInput, type Plan, sandboxPlan } from "../../src/sandbox/plan.ts";
import { REPO } from "../support/helpers.ts";

const ROOT = "/p/proj";

function disk(entries: Record<string, Kind>): (p: string) => Kind {
  return (p) => entries[p] ?? null;
}

/** A root laid out as longrun leaves it, in a git repository. */
const LAID_OUT: Record<string, Kind> = {
  [ROOT]: "dir",
  [`${ROOT}/.longrun`]: "dir",
  [`${ROOT}/memory.db`]: "file",
  [`${ROOT}/raw_data`]: "dir",
  [`${ROOT}/.git`]: "dir",
  [`${ROOT}/.git/config`]: "file",
  [`${ROOT}/.git/hooks`]: "dir",
  [`${ROOT}/.bashrc`]: "file",
  "/home/u/.claude/.credentials.json": "file",
};

function plan(over: Partial<PlanInput> = {}, entries: Record<string, Kind> = LAID_OUT): ReturnType<typeof sandboxPlan> {
  return sandboxPlan({ mode: "lease", root: ROOT, home: "/home/u", cwd: ROOT, scratch: "/tmp/s/tmp", hiddenFile: "/tmp/s/hidden", gitExclude: null, otherRoots: [], gitDirs: [], stateDirs: [], exePaths: [], kind: disk(entries), ...over });
}

function ok(p: ReturnType<typeof sandboxPlan>): Plan {
  assert.equal(p.ok, true, p.ok ? "" : p.message);
  return p as Plan;
}

/** Whether `seq` occurs in `args` as consecutive elements. */
function has(args: readonly string[], ...seq: string[]): boolean {
  for (let i = 0; i + seq.length <= args.length; i++) if (seq.every((s, k) => args[i + k] === s)) return true;
  return false;
}

const hidden = (args: string[], p: string) => has(args, "--perms", "0000", "--tmpfs", p, "--remount-ro", p);
const nulled = (args: string[], p: string) => has(args, "--ro-bind", "/tmp/s/hidden", p);
const readOnly = (args: string[], p: string) => has(args, "--ro-bind", p, p);

describe("sandboxPlan: both modes", () => {
  test("every command gets new pid, network and IPC namespaces, no capabilities, a read-only file system, fresh /dev and /proc", () => {
    for (const mode of ["read", "lease"]) {
      const { args } = ok(plan({ mode }));
      assert.deepEqual(args.slice(0, BASE_ARGS.length), BASE_ARGS);
      for (const flag of ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session"]) assert.ok(args.includes(flag), flag);
      assert.ok(has(args, "--cap-drop", "ALL"));
      assert.ok(has(args, "--ro-bind", "/", "/") && has(args, "--dev", "/dev") && has(args, "--proc", "/proc"));
      assert.ok(!args.some((a, i) => a === "--tmpfs" && args[i + 1] === "/tmp"), "no tmpfs over /tmp: the roots of tests live there");
    }
  });

  test("the scratch directory is writable and is TMPDIR, TMP and TEMP; the tokens are not passed on; the command starts in cwd", () => {
    const { args } = ok(plan({ mode: "read", cwd: `${ROOT}/src` }));
    assert.ok(has(args, "--bind", "/tmp/s/tmp", "/tmp/s/tmp"));
    for (const v of ["TMPDIR", "TMP", "TEMP"]) assert.ok(has(args, "--setenv", v, "/tmp/s/tmp"), v);
    assert.ok(has(args, "--unsetenv", "LONGRUN_HOST_TOKEN") && has(args, "--unsetenv", "LONGRUN_STORE_TOKEN"));
    assert.ok(has(args, "--setenv", "LONGRUN_SANDBOX", "read"));
    assert.ok(has(args, "--chdir", `${ROOT}/src`));
  });

  test("longrun's state, memory database, raw bodies and Claude Code's login are hidden in both modes", () => {
    for (const mode of ["read", "lease"]) {
      const { args } = ok(plan({ mode }));
      assert.ok(hidden(args, `${ROOT}/.longrun`), mode);
      assert.ok(hidden(args, `${ROOT}/raw_data`), mode);
      assert.ok(nulled(args, `${ROOT}/memory.db`), mode);
      assert.ok(nulled(args, "/home/u/.claude/.credentials.json"), mode);
    }
  });

  test("a database's -wal, -shm and -journal get placeholders even in read mode: they appear while the database is in use", () => {
    const p = ok(plan({ mode: "read" }));
    for (const s of ["-wal", "-shm", "-journal"]) {
      assert.ok(nulled(p.args, `${ROOT}/memory.db${s}`), s);
      assert.ok(p.placeholders.some((x) => x.path === `${ROOT}/memory.db${s}` && x.kind === "file"), s);
    }
    assert.ok(!p.placeholders.some((x) => x.path.endsWith("/.claude")), "read mode plants nothing else");
  });

  test("server-store state directories are hidden whole", () => {
    const { args } = ok(plan({ mode: "read", stateDirs: ["/home/u/.local/state/.longrun"] }, { ...LAID_OUT, "/home/u/.local/state/.longrun": "dir" }));
    assert.ok(hidden(args, "/home/u/.local/state/.longrun"));
  });
});

describe("sandboxPlan: read mode", () => {
  test("the root is not bound writable, and nothing is protected read-only twice", () => {
    const { args } = ok(plan({ mode: "read" }));
    assert.ok(!has(args, "--bind", ROOT, ROOT));
    assert.ok(!readOnly(args, `${ROOT}/.git/config`));
  });
});

describe("sandboxPlan: lease mode", () => {
  test("the root is writable, bound before the scratch directory and the masks", () => {
    const { args } = ok(plan());
    const bind = args.findIndex((a, i) => a === "--bind" && args[i + 1] === ROOT);
    assert.ok(bind > 0);
    assert.ok(bind < args.indexOf("/tmp/s/tmp") && bind < args.indexOf(`${ROOT}/.longrun`));
  });

  test("git's configuration and hooks, shell startup files are read-only; absent .claude, .git/info get read-only placeholders", () => {
    const p = ok(plan());
    assert.ok(readOnly(p.args, `${ROOT}/.git/config`));
    assert.ok(readOnly(p.args, `${ROOT}/.git/hooks`));
    assert.ok(readOnly(p.args, `${ROOT}/.bashrc`));
    for (const d of [".claude", ".git/info"]) {
      assert.ok(has(p.args, "--perms", "0555", "--tmpfs", `${ROOT}/${d}`, "--remount-ro", `${ROOT}/${d}`), d);
      assert.ok(p.placeholders.some((x) => x.path === `${ROOT}/${d}` && x.kind === "dir" && !x.hidden), d);
    }
    assert.ok(!p.placeholders.some((x) => x.path.endsWith("/.profile")), "absent shell startup files are left alone");
  });

  test("the directories between the root and a protected path are mount points (bound onto themselves), before the masks inside them", () => {
    const g = `${ROOT}/vendor/lib/.git`;
    const { args } = ok(plan({ gitDirs: [g] }, { ...LAID_OUT, [`${ROOT}/vendor`]: "dir", [`${ROOT}/vendor/lib`]: "dir", [g]: "dir", [`${g}/config`]: "file" }));
    for (const d of [`${ROOT}/.git`, `${ROOT}/vendor`, `${ROOT}/vendor/lib`, g]) assert.ok(has(args, "--bind", d, d), d);
    const at = (p: string) => args.findIndex((a, i) => a === "--bind" && args[i + 1] === p);
    assert.ok(at(ROOT) < at(`${ROOT}/vendor`) && at(`${ROOT}/vendor`) < at(`${ROOT}/vendor/lib`) && at(`${ROOT}/vendor/lib`) < at(g), "outermost first, after the root");
    assert.ok(at(g) < args.indexOf(`${g}/config`), "before the mask inside");
    assert.ok(!has(args, "--bind", ROOT + "/.bashrc", ROOT + "/.bashrc"), "a protected path itself is not bound writable");
    assert.ok(!has(ok(plan({ mode: "read" })).args, "--bind", `${ROOT}/.git`, `${ROOT}/.git`), "read mode pins nothing");
  });

  test("longrun's own executable inside the root is read-only, and the directories leading to it are pinned", () => {
    const exe = `${ROOT}/dist/longrun`;
    const { args } = ok(plan({ exePaths: [exe, "/usr/bin/longrun"] }, { ...LAID_OUT, [`${ROOT}/dist`]: "dir", [exe]: "file", "/usr/bin/longrun": "file" }));
    assert.ok(readOnly(args, exe) && has(args, "--bind", `${ROOT}/dist`, `${ROOT}/dist`));
    assert.ok(!readOnly(args, "/usr/bin/longrun"), "outside the root it is read-only already");
  });

  test("an absent .git/commondir is watched and removed afterwards (an empty placeholder would break git)", () => {
    const p = ok(plan());
    assert.deepEqual(p.removeAfter, [`${ROOT}/.git/commondir`]);
  });

  test("an absent .longrun in a fresh root gets a private hidden placeholder, so that nothing can be planted there", () => {
    const p = ok(plan({}, { [ROOT]: "dir" }));
    assert.ok(hidden(p.args, `${ROOT}/.longrun`));
    assert.ok(p.placeholders.some((x) => x.path === `${ROOT}/.longrun` && x.hidden));
    assert.ok(nulled(p.args, `${ROOT}/memory.db-wal`), "a forged WAL would be replayed into memory.db");
    assert.ok(!p.placeholders.some((x) => x.path.startsWith(`${ROOT}/.git/`)), "no .git is made up");
  });

  test("git inside passes over the hidden files: the root's .git/info/exclude is seen with longrun's lines added", () => {
    const exclude = `${ROOT}/.git/info/exclude`;
    const { args } = ok(plan({ gitExclude: "/tmp/s/exclude" }, { ...LAID_OUT, [`${ROOT}/.git/info`]: "dir", [exclude]: "file" }));
    assert.ok(has(args, "--ro-bind", "/tmp/s/exclude", exclude));
    assert.ok(args.indexOf(exclude) > args.indexOf(`${ROOT}/.git/info`), "after .git/info is bound read-only");
  });

  test("a .git file (a worktree's pointer) is read-only", () => {
    const { args } = ok(plan({}, { ...LAID_OUT, [`${ROOT}/.git`]: "file" }));
    assert.ok(readOnly(args, `${ROOT}/.git`));
  });

  test("a protected path that is a symbolic link is refused: the link itself cannot be protected", () => {
    for (const p of [`${ROOT}/.claude`, `${ROOT}/.git`, `${ROOT}/.longrun`]) {
      const r = plan({}, { ...LAID_OUT, [p]: "link" });
      assert.equal(r.ok, false, p);
      assert.equal(!r.ok && r.code, "protected_link");
    }
  });

  test("nested repositories below the root have their configuration and hooks read-only", () => {
    const g = `${ROOT}/vendor/lib/.git`;
    const { args } = ok(plan({ gitDirs: [g] }, { ...LAID_OUT, [g]: "dir", [`${g}/config`]: "file", [`${g}/hooks`]: "dir" }));
    assert.ok(readOnly(args, `${g}/config`) && readOnly(args, `${g}/hooks`));
  });
});

describe("sandboxPlan: other longrun roots", () => {
  const sib = "/p/other";
  const nested = `${ROOT}/sub/inner`;
  const entries = { ...LAID_OUT, [sib]: "dir", [`${sib}/.longrun`]: "dir", [nested]: "dir", [`${nested}/.longrun`]: "dir", [`${nested}/memory.db`]: "file", "/p": "dir", "/p/.longrun": "dir", "/p/memory.db": "file" } as Record<string, Kind>;

  test("a root beside the lease's root is hidden whole; one the root sits in has its own files hidden; one inside is protected like the root", () => {
    const { args, placeholders } = ok(plan({ otherRoots: [sib, nested, "/p"] }, entries));
    assert.ok(hidden(args, sib));
    assert.ok(hidden(args, "/p/.longrun") && nulled(args, "/p/memory.db"));
    assert.ok(!hidden(args, "/p"), "the root's own parent stays visible");
    assert.ok(hidden(args, `${nested}/.longrun`) && nulled(args, `${nested}/memory.db`));
    assert.deepEqual(placeholders.filter((x) => !x.path.startsWith(`${ROOT}/`) || x.path.startsWith(`${nested}/`)), [], "nothing is created in another root");
  });

  test("a root holding the home directory is not hidden whole", () => {
    const { args } = ok(plan({ otherRoots: ["/home/u"] }, { ...LAID_OUT, "/home/u": "dir", "/home/u/.longrun": "dir" }));
    assert.ok(!hidden(args, "/home/u"));
    assert.ok(hidden(args, "/home/u/.longrun"));
  });
});

describe("sandboxPlan: refusals", () => {
  test("a mode other than read or lease is refused", () => {
    const r = plan({ mode: "write" });
    assert.equal(!r.ok && r.code, "bad_mode");
  });
  test("a relative, missing or non-directory root is refused", () => {
    assert.equal((r => !r.ok && r.code)(plan({ root: "proj" })), "bad_root");
    assert.equal((r => !r.ok && r.code)(plan({ root: "/nope" })), "bad_root");
    assert.equal((r => !r.ok && r.code)(plan({ root: "/f" }, { "/f": "file" })), "bad_root");
  });
  test("lease mode on / is refused: it would make everything writable", () => {
    const r = plan({ root: "/" }, { "/": "dir" });
    assert.equal(!r.ok && r.code, "bad_root");
  });
});

describe("the sandbox's layout comes from the gate's table", () => {
  test("every place the gate protects by name (not /proc) is in the layout, hidden when the gate refuses reading it", () => {
    const all = [...ROOT_ENTRIES.map((e) => ({ ...e, rel: e.rel })), ...GIT_ENTRIES.map((e) => ({ ...e, rel: `.git/${e.rel}` }))];
    for (const rule of PROTECTED.filter((r) => r.where !== "absolute")) {
      for (const first of rule.segments[0]!) {
        const found = all.filter((e) => e.rule === rule.id && e.rel.startsWith(first));
        assert.ok(found.length > 0, `${rule.id}: ${first}`);
        for (const e of found) assert.equal(e.access, rule.read ? "hide" : "readonly", e.rel);
      }
    }
  });
});

describe("the sandbox command's static imports", () => {
  test("reach neither libSQL nor the memory layer nor a root (it runs once per Bash command)", () => {
    const seen = new Set<string>();
    const stack = [join(REPO, "src", "cli", "sandbox.ts")];
    while (stack.length) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      if (!file.endsWith(".ts")) continue;
      for (const m of readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)\s(?!type\b)[^;]*?from\s+["']([^"']+)["']/gms)) {
        stack.push(m[1]!.startsWith(".") ? resolve(dirname(file), m[1]!) : `pkg:${m[1]}`);
      }
    }
    assert.ok([...seen].some((f) => f.endsWith("src/sandbox/plan.ts")), "the closure is computed");
    assert.deepEqual([...seen].filter((f) => f.includes("src/memory/") || f.endsWith("src/root/root.ts") || f.includes("libsql")), []);
  });
});
