/**
 * The examples a gate rule carries, as Codex's execpolicy rules carry `match` and `not_match`:
 * real command lines (most from the hostile corpus, tests/hooks/corpus.ts) that the rule must let
 * through and must refuse. tests/hooks/rule_examples.test.ts runs every one through the decision
 * functions in process, and fails for a rule that has none of either kind.
 */
export interface RuleExamples {
  /** Command lines that pass: read-only for a read-only row, not refused under a lease for a lease row. */
  pass: readonly string[];
  /** Command lines that are refused because of this rule. */
  refused: readonly string[];
}
