/**
 * The README and docs/ tell the truth: the README is short and in its order, every link resolves
 * inside the repository, and the reference lists every method with its side, every error kind
 * with its code and every limit the code enforces.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, test } from "node:test";
import { ERROR_CODES } from "../src/core/errors.ts";
import { LIMITS } from "../src/core/limits.ts";
import { allMethods } from "../src/rpc/methods/index.ts";
import { REPO } from "./support/helpers.ts";

const read = (f: string) => readFileSync(join(REPO, f), "utf8");
const readme = read("README.md");
const docs = readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
const pages = ["README.md", ...docs];

/** The rows of every table whose first two columns are method and side. */
function methodRows(text: string): string[] {
  const rows: string[] = [];
  let inTable = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("| method | side |")) inTable = true;
    else if (!line.startsWith("|")) inTable = false;
    else if (inTable && line.startsWith("| `")) rows.push(line);
  }
  return rows;
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function anchors(text: string): Set<string> {
  const body = text.replace(/```[\s\S]*?```/g, "");
  return new Set([...body.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

describe("README", () => {
  test("is at most 20,000 bytes: the reference lives in docs/", () => {
    const bytes = Buffer.byteLength(readme, "utf8");
    assert.ok(bytes <= 20_000, `README.md is ${bytes} bytes`);
  });

  test("starts with the two commands", () => {
    const block = readme.split("```")[1]!;
    assert.match(block, /npm run demo/);
    assert.match(block, /npm test/);
    assert.match(read(".ci/run"), /npm test/);
  });

  test("keeps its order: what it is, install, a quick start per kind of user, the three rules, known limits", () => {
    const headings = [...readme.matchAll(/^(##+) (.+)$/gm)].map((m) => m[2]!);
    const order = ["What longrun is", "Install", "Quick starts", "At a terminal", "Python over stdio", "HTTP from a container", "MCP server", "Claude Code hooks", "libSQL server", "The three rules", "Known limits"];
    const at = order.map((h) => headings.indexOf(h));
    assert.ok(at.every((i) => i >= 0), `missing: ${order.filter((_, i) => at[i]! < 0).join(", ")}`);
    assert.deepEqual([...at].sort((a, b) => a - b), at, `headings out of order: ${headings.join(" / ")}`);
    for (const rule of ["search first", "saved before shown", "one turn's lease"]) assert.ok(readme.includes(`**${rule}**`), rule);
  });

  test("the files it tells a user about exist", () => {
    for (const f of ["LICENSE", "CONTRIBUTING.md", "install.sh", "Dockerfile", "examples/sidecar/compose.yaml", "clients/python/example.py", "clients/python/longrun_client.py", "scripts/python_wheel.py"]) {
      assert.ok(existsSync(join(REPO, f)), `${f} is named in the docs but missing`);
    }
  });
});

describe("README and docs/", () => {
  for (const page of pages) {
    const text = read(page);
    test(`${page} points at nothing outside the repository and uses no internal shorthand`, () => {
      assert.doesNotMatch(text, /\.\.\/(shared|seeds)|\]\(\.\.\/\.\./, "a downloader does not have ../");
      assert.doesNotMatch(text, /\]\(https?:/, "links stay inside the repository");
      assert.doesNotMatch(text, /\b(I[1-4]|A[1-4])\b|\bseeds?\b/, "I1-I4, A1-A4 and 'seed' mean nothing to a user");
    });

    test(`${page}: every link resolves to a file (and heading) of the repository`, () => {
      for (const m of text.replace(/```[\s\S]*?```/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
        const [path, anchor] = m[1]!.split("#") as [string, string | undefined];
        const target = path === "" ? page : normalize(join(dirname(page), path));
        assert.ok(!target.startsWith(".."), `${page}: ${m[1]} leaves the repository`);
        assert.ok(existsSync(join(REPO, target)), `${page}: ${m[1]} does not exist`);
        if (anchor && target.endsWith(".md")) assert.ok(anchors(read(target)).has(anchor), `${page}: ${m[1]}: no such heading`);
      }
    });
  }

  const protocolRows = methodRows(read("docs/protocol.md"));
  for (const m of allMethods()) {
    test(`docs/protocol.md lists ${m.name} on the ${m.side} side`, () => {
      const rows = protocolRows.filter((r) => r.split("|")[1]!.includes(`\`${m.name}\``));
      assert.equal(rows.length, 2, `${m.name} is not in both protocol tables (at a glance, and every method)`);
      for (const row of rows) {
        const side = row.split("|")[2]!.trim();
        assert.ok(side.startsWith(m.side), `${m.name}: docs say ${side}, code says ${m.side}`);
      }
    });
  }

  test("docs/errors.md lists every kind with its code", () => {
    const errors = read("docs/errors.md");
    for (const [kind, code] of Object.entries(ERROR_CODES)) assert.ok(errors.includes(`| ${code} | \`${kind}\``), `${code} ${kind}`);
  });

  test("docs/limits.md states the numbers the code enforces", () => {
    const limits = read("docs/limits.md");
    const fmt = (n: number) => n.toLocaleString("en-US");
    for (const key of Object.keys(LIMITS) as (keyof typeof LIMITS)[]) {
      assert.ok(limits.includes(fmt(LIMITS[key])), `${key} = ${fmt(LIMITS[key])} is not in docs/limits.md`);
    }
  });
});
