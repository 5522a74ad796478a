/**
 * The release workflow (.github/workflows/release.yml) cannot run here, so its shape is checked:
 * it reads as the subset of YAML it is written in (a small reader below, no YAML dependency),
 * every target of scripts/targets.ts is built and smoke-tested on a runner of its own platform,
 * the commands it runs are ones scripts/release.ts accepts, and the assets it uploads are the
 * ones a release holds (archives, install.sh, SHA256SUMS and its signature, npm packages, wheels).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parseArgs } from "../../scripts/release.ts";
import { REPO } from "../support/helpers.ts";

type Yaml = string | Yaml[] | { [key: string]: Yaml };

/**
 * Block mappings, block sequences, one-line flow mappings `{ a: b }`, literal blocks `|` and
 * quoted or plain scalars: what the workflow uses. Throws, with the line, on anything else.
 */
function readYaml(text: string): Yaml {
  const lines = text.split("\n").map((raw, i) => ({ raw, n: i + 1 })).filter(({ raw }) => raw.trim() !== "");
  for (const { raw, n } of lines) if (/^\t| \t/.test(raw)) throw new Error(`line ${n}: a tab in the indentation`);
  let i = 0;
  const indent = (raw: string) => raw.length - raw.trimStart().length;
  /** Past comment lines (kept only inside literal blocks). */
  const skip = () => {
    while (i < lines.length && lines[i]!.raw.trimStart().startsWith("#")) i++;
  };
  const scalar = (v: string, n: number): Yaml => {
    v = v.replace(/\s+#.*$/, "").trim();
    if (v.startsWith("{")) {
      if (!v.endsWith("}")) throw new Error(`line ${n}: a flow mapping not closed on its line`);
      const out: Record<string, Yaml> = {};
      for (const part of v.slice(1, -1).split(",")) {
        const m = /^\s*([\w-]+):\s*(.*?)\s*$/.exec(part);
        if (!m) throw new Error(`line ${n}: ${JSON.stringify(part)} in a flow mapping`);
        out[m[1]!] = m[2]!;
      }
      return out;
    }
    if (v.startsWith("[")) return v.slice(1, -1).split(",").map((x) => x.trim().replace(/^"(.*)"$/, "$1"));
    return v.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
  };
  const literal = (at: number): string => {
    const body: string[] = [];
    while (i < lines.length && indent(lines[i]!.raw) > at) body.push(lines[i++]!.raw);
    const cut = Math.min(...body.map(indent));
    return body.map((l) => l.slice(cut)).join("\n") + "\n";
  };
  const value = (rest: string, at: number, n: number): Yaml => {
    if (rest === "|") return literal(at);
    skip();
    if (rest === "") return i < lines.length && indent(lines[i]!.raw) > at ? block(indent(lines[i]!.raw)) : "";
    return scalar(rest, n);
  };
  function block(at: number): Yaml {
    skip();
    const first = lines[i]!.raw.trimStart();
    if (first.startsWith("- ")) {
      const list: Yaml[] = [];
      while (i < lines.length && indent(lines[i]!.raw) === at && lines[i]!.raw.trimStart().startsWith("- ")) {
        const { raw, n } = lines[i]!;
        const item = raw.slice(at + 2);
        const m = /^([\w-]+):(?:\s+(.*))?$/.exec(item);
        if (m && !item.startsWith("{")) {
          // a mapping that starts on the dash's line: the rest of it is indented to the key
          lines[i] = { raw: " ".repeat(at + 2) + item, n };
          list.push(block(at + 2));
        } else {
          i++;
          list.push(scalar(item, n));
        }
        skip();
      }
      return list;
    }
    const map: Record<string, Yaml> = {};
    while (i < lines.length && indent(lines[i]!.raw) === at && !lines[i]!.raw.trimStart().startsWith("- ")) {
      const { raw, n } = lines[i++]!;
      const m = /^([\w-]+):(?:\s+(.*))?$/.exec(raw.trim());
      if (!m) throw new Error(`line ${n}: not "key: value": ${raw.trim()}`);
      if (m[1]! in map) throw new Error(`line ${n}: ${m[1]} twice`);
      map[m[1]!] = value((m[2] ?? "").replace(/\s+#.*$/, ""), at, n);
      skip();
    }
    if (i < lines.length && indent(lines[i]!.raw) > at) throw new Error(`line ${lines[i]!.n}: indented deeper than its mapping`);
    return map;
  }
  const doc = block(0);
  skip();
  if (i < lines.length) throw new Error(`line ${lines[i]!.n}: not read (indentation?)`);
  return doc;
}

const text = readFileSync(join(REPO, ".github", "workflows", "release.yml"), "utf8");
const obj = (y: Yaml | undefined): Record<string, Yaml> => {
  assert.ok(y && typeof y === "object" && !Array.isArray(y), `a mapping: ${JSON.stringify(y)}`);
  return y;
};
const list = (y: Yaml | undefined): Yaml[] => {
  assert.ok(Array.isArray(y), `a sequence: ${JSON.stringify(y)}`);
  return y;
};
const runs = (job: Record<string, Yaml>) => list(job.steps).map((s) => obj(s).run).filter((r): r is string => typeof r === "string");

/** The GitHub-hosted runner labels per platform the matrix may use. */
const RUNNERS: Record<string, RegExp> = { "linux-x64": /^ubuntu-\d\d\.04$/, "linux-arm64": /^ubuntu-\d\d\.04-arm$/, "darwin-x64": /^macos-13$/, "darwin-arm64": /^macos-1[4-9]$/, "windows-x64": /^windows-20\d\d$/ };

describe(".github/workflows/release.yml", () => {
  const wf = obj(readYaml(text));
  const jobs = obj(wf.jobs);
  const build = obj(jobs.build);
  const publish = obj(jobs.publish);

  test("reads as YAML: on a tag push, a build job per target and a publish job after them", () => {
    assert.deepEqual(obj(obj(wf.on).push).tags, ["v*"]);
    assert.equal(publish.needs, "build");
    assert.equal(obj(wf.permissions).contents, "read", "read-only but where a job needs more");
    assert.equal(obj(publish.permissions).contents, "write");
  });

  test("every target of scripts/targets.ts is built and smoke-tested on a runner of its own platform", () => {
    const include = list(obj(obj(build.strategy).matrix).include).map(obj);
    // every target: what release.ts builds when given none
    assert.deepEqual(include.map((m) => m.target).sort(), parseArgs([]).targets.map((t) => t.name).sort());
    for (const m of include) {
      const platform = String(m.target).replace(/-musl$/, "");
      assert.match(String(m.runner), RUNNERS[platform]!, `${m.target} on ${m.runner}`);
      assert.ok(["native", "alpine", "windows"].includes(String(m.smoke)), `${m.target}: smoke ${m.smoke}`);
      if (String(m.target).endsWith("-musl")) assert.equal(m.smoke, "alpine", `${m.target} runs where musl is the C library`);
    }
    const smoke = runs(build).join("\n");
    for (const words of ["--version", " demo", "grep -qx OK", "sh install.sh --prefix"]) assert.ok(smoke.includes(words), words);
  });

  test("the commands it runs are ones scripts/release.ts accepts", () => {
    const args = (cmd: string) => cmd.split(/\s+/).map((a) => a.replace(/^"\$TARGET"$/, "linux-x64").replace(/^parts\/part-\*$/, "/parts/part-linux-x64"));
    const buildCmd = runs(build).find((r) => r.includes("npm run release"))!;
    const b = parseArgs(args(buildCmd.trim().split("npm run release -- ")[1]!));
    assert.deepEqual([b.targets.map((t) => t.name), b.part], [["linux-x64"], true]);
    const assembleCmd = runs(publish).find((r) => r.includes("--assemble"))!;
    const a = parseArgs(args(/npm run release -- (--assemble .*)$/m.exec(assembleCmd)![1]!));
    assert.deepEqual(a.assemble, ["/parts/part-linux-x64"]);
    assert.match(assembleCmd, /LONGRUN_MINISIGN_KEY=/);
  });

  test("it uploads what a release holds, checks the signature first, and publishes npm only with its secret", () => {
    const steps = runs(publish);
    const upload = steps.find((r) => r.includes("gh release create"))!;
    for (const asset of ["./*.tar.gz", "./*.zip", "install.sh", "SHA256SUMS", "SHA256SUMS.minisig", "manifest.json", "npm/*.tgz", "python/*.whl"]) assert.ok(upload.includes(` ${asset}`), asset);
    assert.ok(steps.findIndex((r) => r.includes("minisign -Vm SHA256SUMS")) < steps.indexOf(upload), "verified before upload");
    const npm = steps.find((r) => r.includes("npm publish"))!;
    assert.match(npm, /NODE_AUTH_TOKEN" \]; then .*skipped/);
    for (const secret of text.matchAll(/secrets\.(\w+)/g)) assert.ok(text.split("\n").some((l) => l.startsWith("#") && l.includes(secret[1]!)), `${secret[1]} is described at the top`);
  });

  test("the reader refuses what it does not read", () => {
    assert.throws(() => readYaml("a:\n\tb: c\n"), /tab/);
    assert.throws(() => readYaml("a: 1\na: 2\n"), /twice/);
    assert.throws(() => readYaml("a: { b: c\n"), /not closed/);
    assert.deepEqual(readYaml("# c\na:\n  # c\n  - { x: 1, y: 2 }\n  - k: v\n    # c\n    l: w\nb: |\n  one\n  # kept\n  two\n"), { a: [{ x: "1", y: "2" }, { k: "v", l: "w" }], b: "one\n# kept\ntwo\n" });
  });
});
