/**
 * The status page's fixed words in the server's root's language (`.longrun/settings.json`
 * `lang`, the checkpoint text's and the refusals' setting): the shell and the login page, with
 * `<html lang>` to match; English without the setting. In process (Hono's app.request).
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { createHttpApp } from "../../src/http/app.ts";
import { StatusPage } from "../../src/http/page/routes.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const HOST = "127.0.0.1:9999";
const tokens = { host: "h".repeat(32), agent: "a".repeat(32) };

describe("the status page in the root's language (in-process)", () => {
  const open: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of open.splice(0)) await close();
  });

  function serve(lang: string | null) {
    const dir = tempDir();
    mkdirSync(join(dir, ".longrun"), { recursive: true });
    if (lang) writeFileSync(join(dir, ".longrun", "settings.json"), JSON.stringify({ lang }));
    const roots = new RootRegistry({ defaultRoot: dir, allow: [dir] });
    const dispatcher = new Dispatcher({ methods: allMethods(), roots });
    const page = new StatusPage({ dispatcher, defaultRoot: dir, cookieName: "longrun_page_9999", pollMs: 20 });
    const app = createHttpApp({ dispatcher, tokens, hosts: [HOST], defaultLeaseTtlSeconds: 600, page });
    open.push(async () => {
      page.close();
      await roots.closeAll();
      removeDir(dir);
    });
    const get = async (auth?: string) => {
      const r = await app.request("/", { headers: { host: HOST, ...(auth ? { authorization: `Bearer ${auth}` } : {}) } });
      return { status: r.status, text: await r.text() };
    };
    return { shell: () => get(tokens.host), login: () => get() };
  }

  test("zh and ko: the shell's headings and the login page in that language, <html lang> to match", async () => {
    const words = { zh: ["任务", "记忆", "退出登录", "登录链接"], ko: ["작업", "메모리", "로그아웃", "로그인 링크"] } as const;
    for (const lang of ["zh", "ko"] as const) {
      const s = serve(lang);
      const shell = await s.shell();
      assert.equal(shell.status, 200);
      assert.match(shell.text, new RegExp(`<html lang="${lang}">`));
      for (const w of words[lang].slice(0, 3)) assert.ok(shell.text.includes(w), `${lang}: ${w}`);
      assert.ok(!shell.text.includes(">Log out<"), lang);
      const login = await s.login();
      assert.equal(login.status, 401);
      assert.match(login.text, new RegExp(`<html lang="${lang}">`));
      assert.ok(login.text.includes(words[lang][3]), `${lang}: the login page`);
      assert.ok(login.text.includes("<code>longrun open</code>"), "commands and files stay as they are");
    }
  });

  test("without the setting, or with one that cannot be read, the page is English", async () => {
    for (const lang of [null, "fr"]) {
      const shell = await serve(lang).shell();
      assert.match(shell.text, /<html lang="en">/);
      assert.ok(shell.text.includes(">Log out<"));
    }
  });
});
