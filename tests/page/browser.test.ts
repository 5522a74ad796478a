/**
 * The status page in a real browser: Debian's Chromium (never a downloaded one) driven by
 * playwright-core, against a real `longrun http` child process on 127.0.0.1 with a temp root, and a
 * real `longrun serve` on the same root making changes over stdio. Under Bun the server is the
 * compiled executable, under Deno it is `deno run src/main.ts`. Screenshots at desktop and phone
 * widths go to dist/screenshots/.
 *
 * Without /usr/bin/chromium these tests skip (saying how to install it), except under CI=true,
 * where they fail.
 */
import assert from "node:assert/strict";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { startHttpChild } from "../http/start.ts";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { isDeno, REPO, removeDir, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary, Server, TARGETS } from "../support/server.ts";
import { skipped } from "../support/skips.ts";

const CHROMIUM = process.env.LONGRUN_CHROMIUM || "/usr/bin/chromium";
const SHOTS = join(REPO, "dist", "screenshots");
const CI = process.env.CI === "true";
const missing = !existsSync(CHROMIUM);
const skip: string | false = skipped("tests/page: the browser tests", missing && !CI ? `Chromium is not installed at ${CHROMIUM}: apt-get install chromium (Debian's package; these tests never download a browser)` : false);
const target = isDeno ? TARGETS.find((t) => t.argv[0] !== BINARY)! : TARGETS.find((t) => t.argv[0] === BINARY)!;
const runtime = isDeno ? "deno" : "bun";

interface Http {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** The host's one-time login link from the first stdout line. */
  page: string;
  tokens: { host_token: string; agent_token: string };
  stderr: () => string;
  exited: Promise<number | null>;
}

async function startHttp(root: string, allowRoot: string): Promise<Http> {
  const h = await startHttpChild(target.argv, ["--root", root, "--allow-root", allowRoot, "--port", "0"]);
  return { child: h.child, url: h.info.url, page: h.info.page, tokens: JSON.parse(readFileSync(h.info.token_file, "utf8")), stderr: h.stderr, exited: h.exited };
}

describe(`the status page in headless Chromium (${target.name})`, { skip }, () => {
  let root = "";
  /** An allowed directory (--allow-root) for a second root. */
  let more = "";
  let http: Http;
  let serve: Server;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** Script errors and dialogs on any page (the last test asserts there were none). */
  const problems: string[] = [];

  before(async () => {
    if (missing) throw new Error(`CI=true and ${CHROMIUM} is missing: .ci/run installs Debian's chromium (apt-get install chromium)`);
    root = tempDir();
    more = tempDir();
    http = await startHttp(root, more);
    serve = new Server(target, ["serve", "--root", root]);
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    try {
      // stopped while pages still hold their live streams: it must not wait for them
      if (http && http.child.exitCode === null) process.kill(http.child.pid!, "SIGTERM");
      if (http) assert.equal(await http.exited, 0, `the http server stops cleanly with pages open (stderr: ${http.stderr()})`);
    } finally {
      for (const c of contexts) await c.close().catch(() => {});
      await browser?.close();
      await serve?.close();
      removeDir(root);
      removeDir(more);
    }
  });

  /** A new browser (its own cookies and storage) at a width; errors on the page fail the test. */
  const open = async (width: number, height: number, extraHTTPHeaders?: Record<string, string>): Promise<Page> => {
    const ctx = await browser.newContext({ viewport: { width, height }, extraHTTPHeaders });
    contexts.push(ctx);
    const page = await ctx.newPage();
    page.on("pageerror", (e) => void problems.push(`script error on the page: ${e.message}`));
    page.on("dialog", (d) => {
      problems.push(`the page opened a dialog: ${d.message()}`);
      void d.dismiss();
    });
    return page;
  };
  const mint = async (token: string) => {
    const r = await fetch(`${http.url}/page/link`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    return ((await r.json()) as { url: string }).url;
  };
  const rpc = async (method: string, params: Record<string, unknown>, token = http.tokens.host_token) => {
    const r = await fetch(`${http.url}/rpc`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return ((await r.json()) as { result: any }).result;
  };
  const leaseText = (page: Page) => page.locator("#lease-view").innerText();
  const shot = async (page: Page, name: string) => {
    await page.screenshot({ path: join(SHOTS, `${runtime}-${name}.png`), fullPage: true });
    await page.screenshot({ path: join(SHOTS, `${runtime}-${name}-first-screen.png`) });
  };

  /** Text whose contrast with its background is below WCAG AA (4.5:1, or 3:1 for large text). */
  const lowContrast = (page: Page) =>
    page.evaluate(() => {
      const rgba = (c: string) => {
        const m = (c.match(/[\d.]+/g) ?? ["0", "0", "0", "0"]).map(Number);
        return { r: m[0]!, g: m[1]!, b: m[2]!, a: m[3] ?? 1 };
      };
      const lum = (c: { r: number; g: number; b: number }) => {
        const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
      };
      const background = (el: Element | null) => {
        for (; el; el = el.parentElement) {
          const c = rgba(getComputedStyle(el).backgroundColor);
          if (c.a > 0.5) return c;
        }
        return { r: 255, g: 255, b: 255, a: 1 };
      };
      const low: string[] = [];
      for (const el of Array.from(document.querySelectorAll("body *"))) {
        if (el.closest("select, .sr-only, .skip")) continue;
        if (!Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim())) continue;
        const st = getComputedStyle(el);
        if ((el as HTMLElement).offsetParent === null || st.visibility === "hidden") continue;
        const [a, b] = [lum(rgba(st.color)), lum(background(el))];
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        const size = parseFloat(st.fontSize);
        const large = size >= 24 || (Number(st.fontWeight) >= 700 && size >= 18.66);
        if (ratio < (large ? 3 : 4.5)) low.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent!.trim().slice(0, 40)}": ${ratio.toFixed(2)}`);
      }
      return low;
    });

  let host: Page;

  test("the host's link from the start line opens the page (an empty root says so); the link works only once", async () => {
    host = await open(1280, 800);
    await host.goto(http.page);
    await until(async () => (await leaseText(host)).includes("NO TASK"), "the empty root's lease panel", 10_000);
    assert.equal(new URL(host.url()).search, "", "the code is gone from the address bar");
    assert.match(await host.locator("#who").innerText(), /host/);

    const thief = await open(1280, 800);
    await thief.goto(http.page);
    await until(async () => (await thief.locator("#notice").innerText()).includes("already used"), "the refusal of a used link");
    assert.match(await thief.locator("#live").innerText(), /not logged in/);
    assert.match(await thief.locator("#notice").innerText(), /longrun open/, "the refusal names the way to a new link");
    assert.equal(await thief.locator("#lease-view").innerText(), "");
    // no empty dashboard under the refusal: no blank pickers, no panels, no "Log out" while not logged in
    for (const sel of ["#pickers", "#logout", "#lease", ".grid"]) assert.equal(await thief.locator(sel).isVisible(), false, `${sel} is hidden`);
    assert.equal(await thief.locator("#notice").isVisible(), true);
  });

  test("a task started and a grant made over stdio show within a second, without a reload", async () => {
    let navigations = 0;
    host.on("framenavigated", () => navigations++);
    await serve.result("task.start", { description: "Compare three vector databases and write docs/report.md" });
    await until(async () => (await leaseText(host)).includes("READ-ONLY"), "the new task's read-only lease");
    await serve.result("writes.enable", { reason: "granted over stdio", scope: ["docs/**"] });
    await until(async () => {
      const t = await leaseText(host);
      return t.includes("WRITABLE") && t.includes("granted over stdio") && t.includes("host:stdio");
    }, "the stdio grant on the page within a second", 1000);
    assert.match(await host.locator("#turns-view").innerText(), /granted over stdio/);
    await serve.result("turn.begin", { reason: "next message" });
    await until(async () => (await leaseText(host)).includes("READ-ONLY"), "the revocation by a new turn within a second", 1000);
    assert.equal(navigations, 0, "the page never reloaded");
  });

  test("the host grants with a reason from the keyboard, and revokes, on the page; the server records host:page", async () => {
    // from the top of the page by keyboard only: Tab to the reason, type, Tab to the scope, type, Enter
    await host.locator("body").click({ position: { x: 5, y: 300 } });
    await host.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    for (let i = 0; i < 12 && (await host.evaluate(() => document.activeElement?.id)) !== "grant-reason"; i++) await host.keyboard.press("Tab");
    assert.equal(await host.evaluate(() => document.activeElement?.id), "grant-reason", "the reason is reachable by Tab");
    assert.notEqual(await host.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle), "none", "focus is visible");
    await host.keyboard.type("let it write the report");
    await host.keyboard.press("Tab");
    assert.equal(await host.evaluate(() => document.activeElement?.id), "grant-scope");
    await host.keyboard.type("docs/**, notes/*.md");
    await host.keyboard.press("Enter");
    await until(async () => (await leaseText(host)).includes("WRITABLE"), "the page's own grant");
    const task = (await rpc("task.status", {})).task;
    assert.equal(task.access_mode, "writable");
    assert.equal(task.lease.granted_by, "host:page");
    assert.equal(task.lease.reason, "let it write the report");
    assert.deepEqual(task.lease.scope, ["docs/**", "notes/*.md"]);
    assert.match(await leaseText(host), /host:page/);
    await host.getByRole("button", { name: "Revoke now" }).click();
    await until(async () => (await leaseText(host)).includes("READ-ONLY"), "the revocation");
    assert.deepEqual(await lowContrast(host), [], "text contrast (WCAG AA) with a read-only lease");
    await shot(host, "host-desktop-read-only");
    assert.equal((await rpc("task.status", {})).task.access_mode, "read_only");
  });

  test("the agent's page (its minted link, or its token as a header) has no grant, revoke or cancel controls, and the server refuses its grant", async () => {
    await serve.result("run.start", { owner: "worker-1", tools: ["web.search"] });
    for (const how of ["link", "header"] as const) {
      const agent = how === "link" ? await open(1280, 800) : await open(1280, 800, { authorization: `Bearer ${http.tokens.agent_token}` });
      await agent.goto(how === "link" ? await mint(http.tokens.agent_token) : http.url);
      await until(async () => (await leaseText(agent)).includes("READ-ONLY"), `the agent's page (${how})`);
      await until(async () => (await agent.locator("#runs-view").innerText()).includes("R_0001"), "the run on the agent's page");
      assert.match(await agent.locator("#who").innerText(), /agent/);
      for (const sel of ["#grant", "#grant-reason", "#revoke", ".run-cancel"]) assert.equal(await agent.locator(sel).count(), 0, `${sel} on the agent's page (${how})`);
      assert.equal(await agent.getByRole("button", { name: /grant|revoke|cancel/i }).count(), 0);
      // what a hostile agent would do with the page's own credentials: post the action itself
      const status = await agent.evaluate(async () => {
        const key = localStorage.getItem("longrun.page.key");
        const r = await fetch("/page/act", {
          method: "POST",
          headers: { "content-type": "application/json", ...(key ? { "x-longrun-key": key } : {}) },
          body: JSON.stringify({ action: "grant", reason: "I approve myself" }),
        });
        return r.status;
      });
      assert.equal(status, 403, how);
      assert.equal((await rpc("task.status", {})).task.access_mode, "read_only");
    }
    // and the host's page does offer cancelling the run (two steps)
    await until(async () => (await host.locator(".run-cancel").count()) === 1, "the host's cancel button");
  });

  test("the agent's request is shown beside an empty reason field, never as its placeholder; one click takes its words", async () => {
    await serve.result("writes.request", { reason: "edit the parser in src/parse.ts" });
    await until(async () => (await host.locator("#grant-asked").innerText()).includes("edit the parser in src/parse.ts"), "the agent's request beside the field");
    const reason = host.locator("#grant-reason");
    assert.equal(await reason.inputValue(), "", "the field is empty: Grant cannot look filled in");
    assert.doesNotMatch((await reason.getAttribute("placeholder")) ?? "", /parser/, "the agent's words are not the placeholder");
    await host.getByRole("button", { name: "Use these words" }).click();
    assert.equal(await reason.inputValue(), "edit the parser in src/parse.ts");
    await reason.fill("");
    await serve.result("turn.begin", { reason: "next message" });
    await until(async () => !(await host.locator("#grant-asked").isVisible()), "the request line gone with its turn");
  });

  test("the agent's and the user's words are shown as text, never run as HTML or script", async () => {
    const evil = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
    await serve.result("task.start", { description: `Summarize ${evil}` });
    await serve.result("adjust.receive", { text: `Also ${evil}` });
    await until(async () => (await host.locator("#task-view .desc").innerText()).includes("<img src=x"), "the description as text");
    await until(async () => (await host.locator("#adjustments-view").innerText()).includes("<script>"), "the adjustment as text");
    assert.equal(await host.locator("#main img, #main script").count(), 0);
    assert.notEqual(await host.title(), "pwned");
  });

  test("a rich state at desktop and phone widths: everything labelled, nothing wider than the window (screenshots in dist/screenshots/)", async () => {
    // a second task with a run that has every kind of receipt, an unknown charge, artifacts and an adjustment in every stage
    await serve.result("task.start", { description: "Survey open-source vector databases (Qdrant, Milvus, pgvector) and write a comparison report with benchmarks" });
    await serve.result("task.checkpoint", { summary: "five candidates found", next_step: "benchmark insert speed on 1M vectors", phase: "research", kind: "progress" });
    await serve.result("turn.begin", { reason: "the user said go" });
    await serve.result("writes.request", { reason: "write the report to docs/", scope: ["docs/**"] });
    await serve.result("writes.enable", { reason: "write the report", scope: ["docs/**"] });
    const { run } = await serve.result("run.start", { owner: "worker-1", tools: ["web.search", "web.fetch"], budget: { requests: 40, input_tokens: 200000, cost: 5 } });
    const receipt = async (tool: string, key: string) => (await serve.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool, idempotency_key: key, args: { key } })).receipt.receipt_id;
    const ok1 = await receipt("web.search", "q1");
    await serve.result("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: ok1, outcome: "completed", result_ref: "C_0001" });
    const ok2 = await receipt("web.fetch", "q2");
    await serve.result("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: ok2, outcome: "completed", result_ref: "C_0002" });
    const bad = await receipt("web.fetch", "q3");
    await serve.result("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: bad, outcome: "failed", error: "HTTP 503 from the site" });
    await receipt("web.fetch", "q4");
    await serve.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 14, input_tokens: 61000, cost: 1.3 });
    await serve.result("run.claim", { run_id: run.run_id, owner: "worker-2" });
    const adj1 = (await serve.result("adjust.receive", { text: "Please include pgvector too", run_id: run.run_id })).adjustment.adjustment_id;
    await serve.result("adjust.receive", { text: "Keep it under two pages", run_id: run.run_id });
    const req = await receipt2(run.run_id);
    await serve.result("adjust.handoff", { adjustment_id: adj1, run_id: run.run_id, epoch: 2, request_id: req });
    await serve.result("budget.charge", { run_id: run.run_id, epoch: 2, requests: 1, unknown: ["cost"] });
    await serve.result("artifact.put", { name: "report.md", kind: "draft", content: "# draft" });
    await serve.result("artifact.put", { name: "report.md", kind: "full", content: "# report", attachments: [{ name: "chart.png", content: "png" }, { name: "data.csv", error: "export failed" }] });
    await serve.result("adjust.satisfy", { adjustment_id: adj1, artifact: "report.md", version: 2 });
    await serve.result("artifact.mark", { name: "report.md", version: 2, mark: "saved" });
    await serve.result("artifact.mark", { name: "report.md", version: 2, mark: "exported", ok: false, detail: "disk full" });

    async function receipt2(runId: string) {
      return (await serve.result("receipt.begin", { run_id: runId, epoch: 2, tool: "web.search", idempotency_key: "after-adjust", args: {} })).receipt.receipt_id as string;
    }

    // (the last change made above: everything before it is on the page too)
    await until(async () => (await host.locator("#artifacts-view").innerText()).includes("exported ✗"), "the rich state on the host's page");
    const runs = await host.locator("#runs-view").innerText();
    assert.match(runs, /completed/);
    assert.match(runs, /failed/);
    assert.match(runs, /\+ 1 unknown charge of 5/, "a charge of unknown amount is in the bar's own text, beside the limit");
    const tasks = await host.locator("#pick-task option").count();
    assert.equal(tasks, 3);

    const label = async (page: Page) =>
      page.evaluate(() =>
        Array.from(document.querySelectorAll("input, select, button"))
          .filter((el) => !(el as HTMLElement).hidden)
          .filter((el) => {
            const labels = (el as HTMLInputElement).labels;
            return !(labels && labels.length > 0) && !el.getAttribute("aria-label") && !(el.tagName === "BUTTON" && el.textContent!.trim());
          })
          .map((el) => el.outerHTML),
      );
    assert.deepEqual(await label(host), [], "every control has a label");
    assert.deepEqual(await lowContrast(host), [], "text contrast (WCAG AA)");
    await shot(host, "host-desktop");

    const phone = await open(390, 844);
    await phone.goto(await mint(http.tokens.host_token));
    await until(async () => (await phone.locator("#artifacts-view").innerText()).includes("exported ✗"), "the rich state on the phone");
    assert.ok((await phone.evaluate(() => document.documentElement.scrollWidth)) <= 390, "no sideways scrolling on a phone");
    assert.deepEqual(await label(phone), []);
    assert.deepEqual(await lowContrast(phone), []);
    await shot(phone, "host-phone");

    const agent = await open(1280, 800);
    await agent.goto(await mint(http.tokens.agent_token));
    await until(async () => (await agent.locator("#artifacts-view").innerText()).includes("exported ✗"), "the rich state on the agent's page");
    assert.deepEqual(await lowContrast(agent), []);
    await shot(agent, "agent-desktop");
    const agentPhone = await open(390, 844);
    await agentPhone.goto(await mint(http.tokens.agent_token));
    await until(async () => (await agentPhone.locator("#artifacts-view").innerText()).includes("exported ✗"), "the agent's phone page");
    await shot(agentPhone, "agent-phone");

    // the task picker shows another task of the root (its artifacts and runs, not the current one's)
    await host.locator("#pick-task").selectOption({ index: 2 });
    await until(async () => (await host.locator("#task-view").innerText()).includes("Compare three vector databases"), "the picked task");
    assert.match(await host.locator("#task-view").innerText(), /not current/);
    assert.match(await host.locator("#runs-view").innerText(), /R_0001/);
    assert.equal(await host.locator("#grant").count(), 0, "no grant form for a task that is not the current one");
  });

  test("memory search from the page finds what the task saved", async () => {
    await serve.result("memory.save", { type: "note", title: "Qdrant inserts fastest", content: "Qdrant took 41 s for 1M vectors; Milvus 55 s" });
    await host.getByLabel("Search this root's memory").fill("Qdrant");
    await host.getByRole("button", { name: "Search" }).click();
    await until(async () => (await host.locator("#search-view").innerText()).includes("Qdrant inserts fastest"), "the search hit");
  });

  test("the root picker offers the server's other roots, and the page follows the one picked", async () => {
    const second = join(more, "second-project");
    mkdirSync(second);
    await rpc("task.start", { description: "The second project's own task", root: second }, http.tokens.agent_token);
    await until(async () => (await host.locator("#pick-root option").allInnerTexts()).includes(second), "the second root in the picker", 10_000);
    await host.locator("#pick-root").selectOption(second);
    await until(async () => (await host.locator("#task-view").innerText()).includes("The second project's own task"), "the second root's task");
    assert.match(host.url(), /root=/);
    assert.equal(await host.locator("#pick-task option").count(), 1);
    await host.locator("#pick-root").selectOption(root);
    await until(async () => (await host.locator("#task-view").innerText()).includes("Survey open-source"), "back on the first root");
  });

  test("the host cancels a run on the page, in two steps", async () => {
    const cancel = host.locator(".run-cancel");
    await until(async () => (await cancel.count()) === 1, "the current task's run with its cancel button");
    await cancel.click();
    assert.match(await cancel.innerText(), /Confirm/);
    assert.equal((await rpc("run.get", { run_id: "R_0002" })).run.status, "running", "one click cancels nothing");
    await cancel.click();
    await until(async () => (await rpc("run.get", { run_id: "R_0002" })).run.status === "cancelled", "the cancelled run");
    await until(async () => (await host.locator("#runs-view").innerText()).includes("cancelled"), "the cancelled run on the page");
    assert.equal(await host.locator(".run-cancel").count(), 0);
  });

  test("a continuation the agent asks for waits for the host, who grants it on the page with one click", async () => {
    const asked = (await rpc("run.continue", { parent_run_id: "R_0002", owner: "worker-2", budget: { tool_calls: 3 } }, http.tokens.agent_token)).run;
    assert.equal(asked.status, "requested");
    const grant = host.locator(`.run-decide[data-run="${asked.run_id}"]`).first();
    await until(async () => (await grant.count()) === 1, "the requested run with its grant button");
    assert.match(await host.locator("#runs-view").innerText(), /waiting for the host/);
    await grant.click();
    await until(async () => (await rpc("run.get", { run_id: asked.run_id })).run.status === "running", "the granted run");
    assert.equal((await rpc("run.get", { run_id: asked.run_id })).run.grant.decided_by, "host:page");
    await until(async () => (await host.locator(".run-decide").count()) === 0, "no grant buttons once it is granted");
  });

  test("the agent's approval request waits on the page; the host rejects it only with a note, and approves another", async () => {
    const asked = (await rpc("approval.request", { action: "email.send", args_digest: "sha256:ab12", reason: "send the report to the team" }, http.tokens.agent_token)).approval;
    const other = (await rpc("approval.request", { action: "rm -rf build", reason: "make room" }, http.tokens.agent_token)).approval;
    const reject = host.locator(`.approval-decide[data-approval="${asked.approval_id}"]`).nth(1);
    await until(async () => (await reject.count()) === 1, "the pending approval with its buttons");
    assert.match(await host.locator("#approvals-view").innerText(), /email\.send .*send the report to the team/s);
    await reject.click();
    assert.match(await host.locator("#act-status").innerText(), /Say why/);
    assert.equal((await rpc("approval.get", { approval_id: asked.approval_id })).approval.status, "pending", "no note, no rejection");
    await host.locator(`input[aria-label="Note for ${asked.approval_id}"]`).fill("not before the review");
    await reject.click();
    await until(async () => (await rpc("approval.get", { approval_id: asked.approval_id })).approval.status === "rejected", "the rejection");
    const answered = (await rpc("approval.get", { approval_id: asked.approval_id })).approval;
    assert.deepEqual([answered.note, answered.answered_by], ["not before the review", "host:page"]);
    await host.locator(`.approval-decide[data-approval="${other.approval_id}"]`).first().click();
    await until(async () => (await rpc("approval.get", { approval_id: other.approval_id })).approval.status === "approved", "the approval");
    await until(async () => (await host.locator(".approval-decide").count()) === 0, "no buttons once both are answered");
  });

  test("a run parked for the user takes the user's answer on the page and wakes with it", async () => {
    // the task's open run (the continuation granted above): one open run per task
    const r = (await rpc("run.list", {})).runs.find((x: { status: string }) => x.status === "running");
    await rpc("run.park", { run_id: r.run_id, epoch: r.epoch, waiting_for: "which year to cover", for_user: true }, http.tokens.agent_token);
    const box = host.locator(`input[aria-label="Answer for ${r.run_id}"]`);
    await until(async () => (await box.count()) === 1, "the answer box of the parked run");
    await box.fill("cover 2025");
    await host.locator(`.run-decide[data-run="${r.run_id}"]`).click();
    await until(async () => (await rpc("run.get", { run_id: r.run_id })).run.status === "running", "the woken run");
    const woke = (await rpc("run.get", { run_id: r.run_id })).run;
    assert.deepEqual([woke.answer.text, woke.answer.by], ["cover 2025", "host:page"]);
  });

  test("log out ends the session on the server: the same cookie and key are refused, and a reload is not logged in", async () => {
    const page = await open(1280, 800);
    await page.goto(await mint(http.tokens.host_token));
    await until(async () => (await page.locator("#who").innerText()).includes("host"), "logged in as the host");
    const cookie = (await page.context().cookies()).find((c) => c.name.startsWith("longrun_page_"))!;
    const key = await page.evaluate(() => localStorage.getItem("longrun.page.key"));
    assert.ok(cookie && key, "a session cookie and a key");
    await page.locator("#logout").click();
    await until(async () => (await page.locator("#live").innerText()).includes("not logged in"), "the page says it is logged out");
    assert.equal(await page.evaluate(() => localStorage.getItem("longrun.page.key")), null, "the key left this origin's storage");
    const again = await fetch(`${http.url}/page/state`, { headers: { cookie: `${cookie.name}=${cookie.value}`, "x-longrun-key": key!, "sec-fetch-site": "same-origin" } });
    await again.body?.cancel();
    assert.equal(again.status, 401, "the old cookie and key open nothing");
    const reloaded = await page.reload();
    assert.equal(reloaded?.status(), 401, "the cookie is gone too: a reload gets the login page");
    assert.match(await page.locator("main").innerText(), /needs a login link/);
  });

  test("no page had a script error or opened a dialog", () => {
    assert.deepEqual(problems, []);
  });
});
