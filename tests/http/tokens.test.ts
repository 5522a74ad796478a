/**
 * The bearer-token check (src/http/tokens.ts `sideChecker`), in process: which side a token
 * speaks for, and that nothing but the exact token does, whatever its length or characters;
 * tokens from files (src/http/token_files.ts), the metrics token, a swapped set, and the tokens
 * http.json keeps for the next start.
 */
import assert from "node:assert/strict";
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { readGivenTokens, tokenOrigins } from "../../src/http/token_files.ts";
import { keptTokens, LiveTokens, newToken, sideChecker, TokenEnvError, TOKEN_RULES, writeTokenFile } from "../../src/http/tokens.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

describe("the bearer-token check", () => {
  const random = { host: newToken(), agent: newToken() };
  const long = { host: "h".repeat(TOKEN_RULES.max), agent: "a".repeat(TOKEN_RULES.max - 1) + "=" };

  for (const [name, tokens] of [["random tokens", random], ["tokens of the longest length allowed", long]] as const) {
    test(`with ${name}: each token speaks for its side, and nothing else for either`, () => {
      const side = sideChecker(tokens);
      assert.equal(side(`Bearer ${tokens.host}`), "host");
      assert.equal(side(`Bearer ${tokens.agent}`), "agent");
      assert.equal(side(`bearer   ${tokens.agent}  `), "agent", "the scheme in any case, spaces around the token");
      for (const t of [tokens.host, tokens.agent]) {
        for (const wrong of [t.slice(0, -1), `${t}x`, `x${t}`, t.slice(1), `${t.slice(0, -1)}${t.at(-1) === "A" ? "B" : "A"}`, `${t}\u00e9`, `${t.slice(0, -1)}\u0100`]) {
          assert.equal(side(`Bearer ${wrong}`), null, `refused: ${JSON.stringify(wrong.slice(-8))}`);
        }
        assert.equal(side(t), null, "without the scheme");
        assert.equal(side(`Basic ${t}`), null);
      }
      for (const none of [undefined, null, "", "Bearer", "Bearer ", "Bearer " + "x".repeat(TOKEN_RULES.max + 1)]) assert.equal(side(none), null);
    });
  }

  test("two strings that are no tokens never match each other", () => {
    const side = sideChecker({ host: "not a token", agent: "x".repeat(TOKEN_RULES.max + 1) });
    for (const given of ["not", "a", "token!", "x".repeat(TOKEN_RULES.max + 1), "\u0100\u0101"]) assert.equal(side(`Bearer ${given}`), null);
  });

  test("a new start's tokens replace the old ones: the old ones no longer speak for either side", () => {
    const before = sideChecker(random);
    const after = sideChecker({ host: newToken(), agent: newToken() });
    assert.equal(before(`Bearer ${random.host}`), "host");
    assert.equal(after(`Bearer ${random.host}`), null);
    assert.equal(after(`Bearer ${random.agent}`), null);
  });
});

describe("tokens given by environment and by files (src/http/token_files.ts)", () => {
  const HOST = "host-token-from-a-file-0123456789";
  const AGENT = "agent-token-from-a-file-987654321";

  test("a token file's content less one trailing newline is the token; the variable is the file's name", () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, "host"), HOST + "\n");
      writeFileSync(join(dir, "agent"), AGENT + "\r\n");
      const origins = tokenOrigins({ LONGRUN_HOST_TOKEN_FILE: join(dir, "host"), LONGRUN_AGENT_TOKEN_FILE: join(dir, "agent"), LONGRUN_METRICS_TOKEN: "metrics-token-in-a-variable" });
      const { seen, ...given } = readGivenTokens(origins);
      assert.deepEqual(given, { pair: { host: HOST, agent: AGENT }, metrics: "metrics-token-in-a-variable" });
      assert.match(seen, /^\d+:\d+:\d+:\d+:\d+\|\d+:\d+:\d+:\d+:\d+$/, "the two files as they were read");
      writeFileSync(join(dir, "host"), HOST + "\n\n");
      assert.throws(() => readGivenTokens(origins), (e: Error) => e instanceof TokenEnvError && /LONGRUN_HOST_TOKEN_FILE's file has a character outside/.test(e.message), "only one newline is taken off");
    } finally {
      removeDir(dir);
    }
  });

  test("a missing, empty, oversized or non-regular token file, or a token given twice, is an error naming the variable and never the value", () => {
    const dir = tempDir();
    try {
      const secret = "secret-value-that-must-not-be-printed";
      writeFileSync(join(dir, "agent"), AGENT);
      writeFileSync(join(dir, "empty"), "\n");
      writeFileSync(join(dir, "big"), secret.repeat(100));
      writeFileSync(join(dir, "spaces"), `${secret} with spaces`);
      const cases: [Record<string, string>, RegExp][] = [
        [{ LONGRUN_HOST_TOKEN_FILE: join(dir, "missing") }, /^LONGRUN_HOST_TOKEN_FILE: cannot read the token file ".*missing": ENOENT$/],
        [{ LONGRUN_HOST_TOKEN_FILE: join(dir, "empty") }, /^LONGRUN_HOST_TOKEN_FILE names an empty file/],
        [{ LONGRUN_HOST_TOKEN_FILE: join(dir, "big") }, /^LONGRUN_HOST_TOKEN_FILE: cannot read .*: it holds 3700 bytes/],
        [{ LONGRUN_HOST_TOKEN_FILE: dir }, /^LONGRUN_HOST_TOKEN_FILE: cannot read .*: it is not a regular file$/],
        [{ LONGRUN_HOST_TOKEN_FILE: join(dir, "spaces") }, /LONGRUN_HOST_TOKEN_FILE's file has a character outside that set/],
        [{ LONGRUN_HOST_TOKEN_FILE: join(dir, "agent") }, /they are the same/],
        [{ LONGRUN_HOST_TOKEN: secret, LONGRUN_HOST_TOKEN_FILE: join(dir, "agent") }, /^LONGRUN_HOST_TOKEN and LONGRUN_HOST_TOKEN_FILE are both set: set one of them$/],
        [{ LONGRUN_METRICS_TOKEN: AGENT, LONGRUN_HOST_TOKEN: secret }, /^LONGRUN_METRICS_TOKEN must differ from the host and agent tokens/],
      ];
      for (const [env, expected] of cases) {
        const full = { LONGRUN_AGENT_TOKEN_FILE: join(dir, "agent"), ...env };
        assert.throws(() => readGivenTokens(tokenOrigins(full)), (e: Error) => {
          assert.ok(e instanceof TokenEnvError, String(e));
          assert.match(e.message, expected);
          assert.ok(!e.message.includes(secret) && !e.message.includes(AGENT), `no value in ${e.message}`);
          return true;
        });
      }
      assert.throws(() => tokenOrigins({ LONGRUN_AGENT_TOKEN_FILE: join(dir, "agent") }), /LONGRUN_AGENT_TOKEN_FILE is set but the host token is not/);
      const { seen: _, ...alone } = readGivenTokens(tokenOrigins({ LONGRUN_METRICS_TOKEN_FILE: join(dir, "agent") }));
      assert.deepEqual(alone, { pair: null, metrics: AGENT }, "a metrics token alone: host and agent kept or random");
    } finally {
      removeDir(dir);
    }
  });

  test("the metrics token opens nothing but the metrics: it speaks for no side", () => {
    const tokens = { host: newToken(), agent: newToken(), metrics: newToken() };
    const live = new LiveTokens(tokens);
    assert.equal(live.credentialOf(`Bearer ${tokens.metrics}`), "metrics");
    assert.equal(live.sideOf(`Bearer ${tokens.metrics}`), null);
    assert.equal(sideChecker(tokens)(`Bearer ${tokens.metrics}`), null);
    assert.equal(new LiveTokens({ host: tokens.host, agent: tokens.agent }).credentialOf(`Bearer ${tokens.metrics}`), null);
  });

  test("a swapped set of tokens is in force at once: the old ones speak for nothing", () => {
    const old = { host: newToken(), agent: newToken(), metrics: newToken() };
    const live = new LiveTokens(old);
    const next = { host: newToken(), agent: newToken(), metrics: null };
    live.set(next);
    for (const t of [old.host, old.agent, old.metrics]) assert.equal(live.credentialOf(`Bearer ${t}`), null);
    assert.equal(live.sideOf(`Bearer ${next.host}`), "host");
  });

  test("tokens kept in http.json are taken again only from our own 0600 regular file with valid tokens", () => {
    const dir = tempDir();
    try {
      const file = join(dir, "http.json");
      assert.equal(keptTokens(file), null, "no file: nothing kept, nothing to say");
      const tokens = { host: newToken(), agent: newToken(), metrics: newToken() };
      writeTokenFile(file, { url: "http://127.0.0.1:1", tokens, origins: { given: {} } });
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.deepEqual(keptTokens(file), { tokens });
      chmodSync(file, 0o640);
      assert.match((keptTokens(file) as { why: string }).why, /mode 640 \(0600 needed\)/);
      chmodSync(file, 0o600);
      symlinkSync(file, join(dir, "link.json"));
      assert.match((keptTokens(join(dir, "link.json")) as { why: string }).why, /not a regular file/);
      writeFileSync(file, JSON.stringify({ host_token: "short", agent_token: tokens.agent }), { mode: 0o600 });
      assert.match((keptTokens(file) as { why: string }).why, /break the rules/);
      writeFileSync(file, JSON.stringify({ host_token: tokens.host, agent_token: tokens.host }));
      assert.match((keptTokens(file) as { why: string }).why, /break the rules/);
      writeFileSync(file, JSON.stringify({ host_token: tokens.host, agent_token: tokens.agent, metrics_token: tokens.host }));
      assert.deepEqual(keptTokens(file), { tokens: { host: tokens.host, agent: tokens.agent, metrics: null } }, "a metrics token equal to another is not kept");
      writeTokenFile(file, { url: "http://127.0.0.1:1", tokens, origins: { given: { host: { variable: "LONGRUN_HOST_TOKEN_FILE", file: "/run/secrets/h" }, agent: { variable: "LONGRUN_AGENT_TOKEN" } } } });
      const written = JSON.parse(readFileSync(file, "utf8"));
      assert.equal(written.tokens_from_env, true);
      assert.equal(written.host_token_file, "/run/secrets/h");
      assert.equal(written.agent_token_env, "LONGRUN_AGENT_TOKEN");
      for (const t of Object.values(tokens)) assert.ok(!JSON.stringify(written).includes(t), "given tokens are not written");
      assert.match((keptTokens(file) as { why: string }).why, /holds no tokens/);
    } finally {
      removeDir(dir);
    }
  });
});
