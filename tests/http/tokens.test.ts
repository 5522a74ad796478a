/**
 * The bearer-token check (src/http/tokens.ts `sideChecker`), in process: which side a token
 * speaks for, and that nothing but the exact token does, whatever its length or characters.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { newToken, sideChecker, TOKEN_RULES } from "../../src/http/tokens.ts";

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
