/**
 * Tests that need outside tools (a Terraform engine, MariaDB, shellcheck, …) run where the tools
 * are; where they are missing they skip with a visible notice locally, and fail in CI (CI set),
 * which must have installed them with scripts/ci/install-tools.sh.
 */

/** Fails in CI; elsewhere prints a notice that the tests described by `what` are skipped. */
export function reportMissingTools(what: string, missing: string[]): void {
  const message = `${what} needs ${missing.join(", ")} (scripts/ci/install-tools.sh installs it)`;
  if (process.env.CI) throw new Error(`CI must run every test, but ${message}`);
  console.warn(`SKIPPED ${message}`);
}

/** `describe` when nothing is missing; otherwise reportMissingTools, then a skipped `describe` whose title names what is missing. */
export function describeWithTools(name: string, missing: string[], body: () => void): void {
  if (missing.length === 0) {
    describe(name, body);
    return;
  }
  reportMissingTools(`"${name}"`, missing);
  // The reason goes into the title too: jest's reports (and the workflow's notices) show titles, not logs.
  describe.skip(`${name} (skipped: needs ${missing.join(", ")})`, body);
}
