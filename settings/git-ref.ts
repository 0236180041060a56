/**
 * The one rule for a git ref that a user names (a branch, a tag or a commit): the command line of
 * `npm run ops -- <stack> release <ref>` (scripts/ops.ts), the scale-out stack's variable `release_ref`
 * (a Terraform validation), and the host's ops command (userdata/ops.sh, check_ref, before any lock,
 * secret or clone) all apply these two patterns, written once here. They are plain regular expressions
 * that JavaScript, Terraform's RE2 and bash's POSIX ERE read alike (`[.]`, not a backslash).
 *
 * A ref passes when it matches REF_SHAPE and not REF_FORBIDDEN: git's rules of `git check-ref-format
 * --allow-onelevel` (no `..`, no component starting with `.` or ending with `.lock`, no trailing `.` or
 * `/`, no `//`, and, through the characters allowed, no `@{`, control characters, space, `~ ^ : ? * [ \`),
 * narrowed to characters that are one word in any shell and never an option (no leading `-`).
 * __tests__/settings/git-ref.test.ts holds the rule against real git over a corpus of cases.
 */

/** Longest ref, in characters. */
export const MAX_REF_LENGTH = 200;

/** What a ref must look like: letters, digits and `. _ / -`, starting with a letter or digit. */
export const REF_SHAPE = `^[A-Za-z0-9][A-Za-z0-9._/-]{0,${MAX_REF_LENGTH - 1}}$`;

/** What git's check-ref-format refuses among those: `..`, a component starting with `.` or ending in `.lock`, a trailing `.` or `/`, `//`. */
export const REF_FORBIDDEN = "[.][.]|(^|/)[.]|[.]lock(/|$)|[/.]$|//";

/** The rule in words, for messages. */
export const REF_EXPECTED =
  `a branch, tag or commit of 1 to ${MAX_REF_LENGTH} letters, digits and . _ / -, starting with a letter or digit, ` +
  "that git check-ref-format accepts (no .., no component starting with . or ending in .lock, no trailing . or /, no //)";

const shape = new RegExp(REF_SHAPE);
const forbidden = new RegExp(REF_FORBIDDEN);

/** Whether `ref` passes the rule. */
export function isGitRef(ref: string): boolean {
  return shape.test(ref) && !forbidden.test(ref);
}
