import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { actionInScope, globToRegExp } from "../../src/core/scope.ts";

describe("lease scope patterns", () => {
  const cases: [string, string[], string, boolean][] = [
    ["a path under a double-star pattern", ["src/**"], "src/a/b.ts", true],
    ["a verb and a path under the pattern", ["src/**"], "edit src/a.ts", true],
    ["a path outside the pattern", ["src/**"], "edit tests/a.ts", false],
    ["one target in and one out", ["src/**"], "edit src/a.ts /etc/passwd", false],
    ["a parent segment that climbs out", ["src/**"], "edit src/../.env", false],
    ["a parent segment inside a whole-action pattern", ["**"], "edit ../secrets", false],
    ["a single star stays in one segment", ["src/*.ts"], "src/a/b.ts", false],
    ["a single star in one segment", ["src/*.ts"], "src/b.ts", true],
    ["a whole-action pattern", ["deploy staging"], "deploy staging", true],
    ["a leading ./ is ignored", ["src/**"], "edit ./src/x.ts", true],
    ["a sibling prefix is not the directory", ["src/**"], "edit src-evil/x.ts", false],
    ["question mark is one character", ["a?.txt"], "write ab.txt", true],
    ["regex characters are literal", ["a+b.(x)"], "write a+b.(x)", true],
    ["regex characters do not act as regex", ["a+b"], "write aab", false],
    ["double-star slash matches zero segments", ["src/**/x.ts"], "src/x.ts", true],
  ];
  for (const [name, scope, action, expected] of cases) {
    test(`${name}: ${JSON.stringify(action)} in ${JSON.stringify(scope)} is ${expected}`, () => {
      assert.equal(actionInScope(action, scope), expected);
    });
  }

  test("globToRegExp anchors the whole string", () => {
    assert.equal(globToRegExp("a*").test("xa"), false);
    assert.equal(globToRegExp("a*").test("abc"), true);
  });
});
