/**
 * Every Terraform variable of every example stack can be passed by the workflows: the plan jobs give
 * check-stack.sh the repository's variables (toJSON(vars)), and it passes each variable the stack declares,
 * its secrets aside, from the repository variable of its name in upper case, only when set. Run here on the
 * synthesized examples with a repository that sets them all, one that sets none, and one with a bad value;
 * then the documented restore from GitHub (docs/operations.md): DATA_VOLUME_SNAPSHOT_ID reaches the plan.
 */
import { execFile } from "child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { parse } from "yaml";
import { EXAMPLE_SETTINGS_FILES, exampleStackJson } from "../../scripts/docs";
import { PUBLIC_SENSITIVE_VARIABLES } from "../../scripts/docs/tables";
import { StackJson } from "../../scripts/docs/terraform-json";
import { loadStackSettings } from "../../settings/stack-settings";

jest.setTimeout(60_000);

const ROOT = resolve(__dirname, "../..");
const SCRIPT = join(ROOT, "scripts/ci/check-stack.sh");
/** Sensitive, but given by a repository variable (the public half of a key): check-stack.sh's public_sensitive. */
const PUBLIC_SENSITIVE = PUBLIC_SENSITIVE_VARIABLES;

const stacks: [string, StackJson][] = EXAMPLE_SETTINGS_FILES.map((file) => [
  loadStackSettings(file).stackName,
  exampleStackJson(file),
]);
const nonSecret = (stack: StackJson) =>
  Object.entries(stack.variable ?? {})
    .filter(([name, block]) => !block.sensitive || PUBLIC_SENSITIVE.includes(name))
    .map(([name]) => name)
    .sort();

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "crm-variables-"));
  for (const [name, stack] of stacks) {
    mkdirSync(join(dir, "cdktf.out/stacks", name), { recursive: true });
    // The variables are what the script reads; the s3 backend is what it insists on.
    writeFileSync(
      join(dir, "cdktf.out/stacks", name, "cdk.tf.json"),
      JSON.stringify({
        ...stack,
        terraform: { ...(stack.terraform ?? {}), backend: { s3: { bucket: "b", key: "k", region: "us-east-1" } } },
      }),
    );
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs check-stack.sh for a stack with the repository variables given; the TF_VAR_s it wrote to GITHUB_ENV. */
function check(
  stack: string,
  variables: Record<string, string>,
): Promise<{ code: number; stdout: string; env: Record<string, string> }> {
  const envFile = join(dir, `env-${stack}-${Object.keys(variables).length}`);
  writeFileSync(envFile, "");
  return new Promise((done) =>
    execFile(
      "bash",
      [SCRIPT, "--secrets", "placeholders"],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          STACK: stack,
          AWS_REGION: "us-east-1",
          GITHUB_ENV: envFile,
          REPOSITORY_VARIABLES: JSON.stringify(variables),
        },
      },
      (error, stdout) => {
        const env = Object.fromEntries(
          readFileSync(envFile, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => line.split(/=(.*)/s).slice(0, 2)),
        );
        done({ code: error ? Number(error.code) : 0, stdout, env });
      },
    ),
  );
}

describe("check-stack.sh passes the stacks' Terraform variables from repository variables", () => {
  it.each(stacks)(
    "%s: every variable but the secrets, each from its upper-case repository variable",
    async (name, stack) => {
      const variables = Object.fromEntries(
        nonSecret(stack).map((variable) => [variable.toUpperCase(), `value-of-${variable}`]),
      );
      const result = await check(name, { ...variables, AWS_PLAN_ROLE_ARN: "arn:aws:iam::123456789012:role/x" });
      expect(result.code).toBe(0);
      const passed = Object.keys(result.env)
        .filter((key) => !result.env[key].startsWith("placeholder-"))
        .sort();
      expect(passed).toEqual(nonSecret(stack).map((variable) => `TF_VAR_${variable}`));
      for (const variable of nonSecret(stack)) expect(result.env[`TF_VAR_${variable}`]).toBe(`value-of-${variable}`);
    },
  );

  it("covers what a restore and the scale-out stack need (data_volume_snapshot_id, data_volume_size_gib, snapshot_retention_count, detailed_monitoring, subnet_ids, the sizes)", () => {
    const all = new Set(stacks.flatMap(([, stack]) => nonSecret(stack)));
    for (const variable of [
      "data_volume_snapshot_id",
      "data_volume_size_gib",
      "snapshot_retention_count",
      "detailed_monitoring",
      "subnet_ids",
      "hosts_min_size",
      "hosts_max_size",
      "hosts_desired_capacity",
      "database_instance_class",
      "database_allocated_storage_gib",
    ])
      expect(all).toContain(variable);
  });

  it("names every required variable a stack lacks, and passes no optional one that is unset (the stack's default applies)", async () => {
    const single = await check("CrmHostStack", {});
    expect(single.code).toBe(1);
    expect(single.stdout.split("\n").filter((line) => line.startsWith("::error"))).toEqual(
      ["KEY_PAIR_NAME", "SSH_PUBLIC_KEY", "SUBNET_ID"].map(
        (variable) =>
          `::error title=Missing repository setting::variable ${variable} is not set (see docs/github-actions.md)`,
      ),
    );
    const scaleOut = await check("CrmHost-scale", { KEY_PAIR_NAME: "k", SSH_PUBLIC_KEY: "ssh-ed25519 AAAA k" });
    expect(scaleOut.stdout).toContain(
      "::error title=Missing repository setting::variable SUBNET_IDS is not set (see docs/github-actions.md)",
    );
    const required = await check("CrmHostStack", {
      KEY_PAIR_NAME: "k",
      SSH_PUBLIC_KEY: "ssh-ed25519 AAAA k",
      SUBNET_ID: "subnet-1",
      VPC_ID: "",
    });
    expect(required.code).toBe(0);
    expect(
      Object.keys(required.env)
        .filter((key) => !required.env[key].startsWith("placeholder-"))
        .sort(),
    ).toEqual(["TF_VAR_key_pair_name", "TF_VAR_ssh_public_key", "TF_VAR_subnet_id"]);
  });

  it("refuses a value of more than one line (it would write a second line to GITHUB_ENV)", async () => {
    const result = await check("CrmHostStack", {
      KEY_PAIR_NAME: "k",
      SSH_PUBLIC_KEY: "ssh-ed25519 AAAA k",
      SUBNET_ID: "subnet-1\nTF_VAR_x=injected",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("variable SUBNET_ID as one line (Terraform variable subnet_id) is not set");
    expect(Object.keys(result.env)).not.toContain("TF_VAR_x");
  });

  it("the documented restore from GitHub: DATA_VOLUME_SNAPSHOT_ID reaches the plan as TF_VAR_data_volume_snapshot_id", async () => {
    const result = await check("CrmHostStack", {
      KEY_PAIR_NAME: "k",
      SSH_PUBLIC_KEY: "ssh-ed25519 AAAA k",
      SUBNET_ID: "subnet-1",
      DATA_VOLUME_SNAPSHOT_ID: "snap-0123456789abcdef0",
    });
    expect(result.env.TF_VAR_data_volume_snapshot_id).toBe("snap-0123456789abcdef0");
    expect(readFileSync(join(ROOT, "docs/operations.md"), "utf8")).toContain("DATA_VOLUME_SNAPSHOT_ID");
  });
});

describe("the plan jobs give check-stack.sh the repository's variables", () => {
  const workflow = parse(readFileSync(join(ROOT, ".github/workflows/terraform-plan.yml"), "utf8")) as {
    jobs: Record<string, { env?: Record<string, string>; steps: { run?: string }[] }>;
  };
  it.each(["plan", "deploy-plan", "drift"])("%s", (id) => {
    expect(workflow.jobs[id].env?.REPOSITORY_VARIABLES).toBe("${{ toJSON(vars) }}");
    expect(workflow.jobs[id].steps.some((step) => step.run?.includes("scripts/ci/check-stack.sh"))).toBe(true);
    // No Terraform variable is listed by hand: every one comes through check-stack.sh.
    expect(Object.keys(workflow.jobs[id].env ?? {}).filter((key) => key.startsWith("TF_VAR_"))).toEqual([]);
  });
});
