/** `longrun doctor`'s judgement in-process: facts in, lines and a verdict out (src/cli/doctor_report.ts). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type DoctorFacts, doctorReport, firstWord, readHooks, readSandbox } from "../../src/cli/doctor_report.ts";

const EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"];
const ROOT = "/p";

function installed(exe = "/usr/local/bin/longrun", root = ROOT) {
  const hooks: Record<string, unknown> = {};
  for (const e of EVENTS) hooks[e] = [{ hooks: [{ type: "command", command: `${exe} hook claude ${e} --root ${root}` }] }];
  return {
    hooks,
    sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false, filesystem: { denyWrite: ["/p/.longrun", "/p/.claude", exe], denyRead: ["/p/.longrun"] } },
  };
}

function facts(over: Partial<DoctorFacts> = {}, settings: unknown = installed()): DoctorFacts {
  const hooks = readHooks(settings, ROOT, EVENTS);
  return {
    root: ROOT,
    home: "/home/me",
    platform: "linux",
    bwrap: { path: "/usr/bin/bwrap", works: true, error: null },
    socat: "/usr/bin/socat",
    settingsFile: "/p/.claude/settings.local.json",
    settingsError: null,
    hooks,
    programs: hooks.programs.map((path) => ({ path, exists: true, executable: true })),
    sandbox: readSandbox(settings),
    paths: [
      { path: "/p/.longrun", rule: "longrun_state", what: "longrun's state (.longrun/)", read: true },
      { path: "/p/.claude", rule: "claude_settings", what: "Claude Code's settings (.claude/)", read: false },
    ],
    ...over,
  };
}

const line = (r: ReturnType<typeof doctorReport>, id: string) => r.checks.find((c) => c.id === id)!;

describe("doctor's report", () => {
  test("hooks installed, bubblewrap working, socat, the sandbox required: every protection OS-enforced", () => {
    const r = doctorReport(facts());
    assert.equal(r.ok, true, r.lines.join("\n"));
    assert.deepEqual(r.paths.map((p) => p.enforcement), ["os", "os"]);
    assert.ok(r.lines.some((l) => /\.longrun.*OS-enforced \(sandbox\)/.test(l)));
    assert.equal(r.lines.at(-1), "every protection is OS-enforced");
    assert.ok(r.lines.every((l) => !l.includes("\n")));
  });

  test("without bubblewrap the paths are best effort (the hook's parser) and the verdict fails", () => {
    const r = doctorReport(facts({ bwrap: { path: null, works: false, error: null } }));
    assert.equal(r.ok, false);
    assert.equal(line(r, "bubblewrap").ok, false);
    assert.match(line(r, "bubblewrap").line, /apt-get install bubblewrap socat/);
    assert.deepEqual(r.paths.map((p) => p.enforcement), ["hook", "hook"]);
    assert.ok(r.lines.some((l) => /^FAIL .*best effort \(hook parser\)/.test(l)));
  });

  test("a bubblewrap that cannot create its sandbox, or no socat, is not enough", () => {
    assert.equal(doctorReport(facts({ bwrap: { path: "/usr/bin/bwrap", works: false, error: "No permissions" } })).paths[0]!.enforcement, "hook");
    assert.equal(doctorReport(facts({ socat: null })).ok, false);
  });

  test("each sandbox setting is required: enabled, failIfUnavailable, allowUnsandboxedCommands false", () => {
    for (const [key, value] of [["enabled", false], ["failIfUnavailable", false], ["allowUnsandboxedCommands", true], ["failIfUnavailable", undefined]] as const) {
      const s = installed();
      (s.sandbox as Record<string, unknown>)[key] = value;
      const r = doctorReport(facts({}, s));
      assert.equal(r.ok, false, key);
      assert.match(line(r, "sandbox_settings").line, new RegExp(key));
      assert.equal(r.paths[0]!.enforcement, "hook", key);
    }
  });

  test("a path missing from the sandbox's deny lists (reads too, where protected) is only best effort", () => {
    const s = installed();
    s.sandbox.filesystem.denyRead = [];
    const r = doctorReport(facts({}, s));
    assert.deepEqual(r.paths.map((p) => p.enforcement), ["hook", "os"]);
  });

  test("no hooks installed: says so, and the paths are not protected", () => {
    const r = doctorReport(facts({}, {}));
    assert.equal(r.ok, false);
    assert.match(line(r, "hooks").line, /not installed.*longrun hook install claude --root \/p/);
    assert.deepEqual(r.paths.map((p) => p.enforcement), ["none", "none"]);
  });

  test("hooks for another root, some events missing, or a program that is gone do not count", () => {
    assert.match(line(doctorReport(facts({}, installed("/usr/local/bin/longrun", "/elsewhere"))), "hooks").line, /not installed/);
    const some = installed();
    delete (some.hooks as Record<string, unknown>).Stop;
    assert.match(line(doctorReport(facts({}, some)), "hooks").line, /4 of 5 installed, missing Stop/);
    const gone = doctorReport(facts({ programs: [{ path: "/usr/local/bin/longrun", exists: false, executable: false }] }));
    assert.equal(gone.ok, false);
    assert.match(line(gone, "hooks").line, /does not exist/);
  });

  test("macOS needs nothing installed (Seatbelt); another platform has no sandbox", () => {
    const mac = doctorReport(facts({ platform: "darwin", bwrap: { path: null, works: false, error: null }, socat: null }));
    assert.equal(mac.ok, true, mac.lines.join("\n"));
    assert.equal(doctorReport(facts({ platform: "win32" })).ok, false);
  });

  test("Landlock's ABI is shown when known and never changes the verdict", () => {
    assert.ok(doctorReport(facts({ landlockAbi: 6 })).lines.includes("info  landlock: ABI 6"));
    assert.equal(doctorReport(facts({ landlockAbi: null })).ok, true);
    assert.equal(doctorReport(facts()).lines.some((l) => l.includes("landlock")), false, "not looked up: not shown");
  });

  test("a hook command's program is read back as install quoted it", () => {
    assert.equal(firstWord("/usr/bin/longrun hook claude Stop --root /p"), "/usr/bin/longrun");
    assert.equal(firstWord("'/opt/my apps/longrun' hook claude Stop --root /p"), "/opt/my apps/longrun");
    assert.equal(firstWord("'/opt/it'\\''s/longrun' hook"), "/opt/it's/longrun");
    const h = readHooks(installed("'/opt/my apps/longrun'", "'/my root'"), "/my root", EVENTS);
    assert.deepEqual(h.installed, EVENTS);
    assert.deepEqual(h.direct, ["/opt/my apps/longrun"]);
  });
  test("the hooks' program: it must answer --version and lie in a place that lasts; never judged without the hooks", () => {
    const good = doctorReport(facts({ version: "longrun 0.1.0 (linux-x64, commit abc)", programs: [{ path: "/usr/local/bin/longrun", exists: true, executable: true, version: "longrun 0.1.0 (linux-x64, commit abc)", unstable: null }] }));
    assert.equal(good.ok, true, good.lines.join("\n"));
    assert.equal(good.version, "longrun 0.1.0 (linux-x64, commit abc)");
    assert.equal(good.lines[0], "info  longrun 0.1.0 (linux-x64, commit abc)");
    assert.match(line(good, "hook_program").line, /^hook program: \/usr\/local\/bin\/longrun \(longrun 0\.1\.0 .*\), in a lasting place$/);
    const venv = doctorReport(facts({ programs: [{ path: "/v/site-packages/longrun/bin/longrun", exists: true, executable: true, version: "longrun 0.1.0", unstable: "a Python virtual environment" }] }));
    assert.equal(venv.ok, false);
    assert.match(line(venv, "hook_program").line, /lies in a Python virtual environment.*run longrun hook install claude --root \/p/);
    assert.equal(venv.lines.at(-1), "every protection is OS-enforced, but 1 other check(s) failed (above)");
    const silent = doctorReport(facts({ programs: [{ path: "/usr/local/bin/longrun", exists: true, executable: true, version: null, unstable: null }] }));
    assert.match(line(silent, "hook_program").line, /does not answer --version/);
    assert.equal(doctorReport(facts({}, {})).checks.some((c) => c.id === "hook_program"), false, "no hooks: nothing to judge");
  });

  test("token files: there and 0600 pass; readable by others or missing fail; none is fine", () => {
    const tokens = (mode: number | null, exists = true) => doctorReport(facts({ tokens: [{ source: ".longrun/http.json", path: "/p/.longrun/http.json", exists, mode }] }));
    assert.equal(tokens(0o100600).ok, true);
    assert.match(line(tokens(0o100640), "tokens").line, /mode 0640, readable by others: chmod 600 \/p\/.longrun\/http.json/);
    assert.equal(tokens(0o100640).ok, false);
    assert.equal(tokens(null, false).ok, false);
    assert.equal(doctorReport(facts({ tokens: [] })).ok, true);
    assert.equal(doctorReport(facts()).checks.some((c) => c.id === "tokens"), false, "not looked at: not shown");
  });
});
