/**
 * The workflows' steps run for real: each job of .github/workflows/ in a fresh clone of the commit
 * under test (HEAD with the tracked files' changes), in order, with the runner's environment
 * simulated and the `uses:` steps stood in by this machine's Node.js and Terraform
 * (__tests__/support/workflow-runner.ts), as far as each job goes without AWS: the steps from
 * the AWS credentials on are listed as needing AWS, and each test says which those are. The plan jobs,
 * the apply and the drift check then run to their end with a stand-in for AWS: a moto server, and the
 * real AWS provider (hashicorp/aws of the project's Terraform CLI configuration, as in
 * __tests__/engine/real-provider.test.ts).
 *
 * The test job's own jest runs on two small test files in the clone (one that passes, one whose
 * tools are missing), not on this suite (which would run itself again): what is proven is the
 * step (type check, jest's report, the skipped-test notices, the exit status), not the suite.
 */
import { Testing } from "cdktf";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { findEngine, flatten } from "../support/terraform-engine";
import {
  awsJson,
  droppedTypes,
  findProviderSetup,
  ignoringMotoDrift,
  motoEnvironment,
  providerCopy,
} from "../support/real-provider";
import { newKey } from "../support/ssh-keys";
import gaps from "../engine/moto-gaps.json";
import { describeWithTools } from "../support/required-tools";
import {
  commitUnderTest,
  JobResult,
  RepositorySettings,
  SimulatedEvent,
  StepResult,
  WorkflowRun,
  WorkflowStep,
} from "../support/workflow-runner";
import { TEARDOWN_MS } from "../support/teardown";

const ROOT = resolve(__dirname, "../..");
const PLAN = ".github/workflows/terraform-plan.yml";
const RELEASE = ".github/workflows/release.yml";
const MINUTES = 60_000;
const providerSetup = findProviderSetup();

/** The repository variables of a repository set up as docs/github-actions.md says, with the example environments. */
const VARS: Record<string, string> = {
  AWS_REGION: "us-east-1",
  AWS_PLAN_ROLE_ARN: "arn:aws:iam::123456789012:role/crm-host-github-plan",
  AWS_DEPLOY_ROLE_ARN: "arn:aws:iam::123456789012:role/crm-host-github-deploy",
  VPC_ID: "vpc-0123456789abcdef0",
  SUBNET_ID: "subnet-0123456789abcdef0",
  AVAILABILITY_ZONE: "us-east-1a",
  KEY_PAIR_NAME: "crm-host",
  SSH_PUBLIC_KEY: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB admin@example",
  SSH_INGRESS_CIDRS: '["203.0.113.0/24"]',
  CRM_SETTINGS: "examples",
  // The environment that keeps the secrets in the user data, as the original stack; CrmHost-prod: in Parameter Store.
  CRM_STACK_NAME: "CrmHost-dev",
};
/** The Terraform variables the plan jobs pass on from repository variables (only those set): VARS sets these. */
const OPTIONAL_PASSED = {
  TF_VAR_availability_zone: VARS.AVAILABILITY_ZONE,
  TF_VAR_key_pair_name: VARS.KEY_PAIR_NAME,
  TF_VAR_ssh_ingress_cidrs: VARS.SSH_INGRESS_CIDRS,
  TF_VAR_ssh_public_key: VARS.SSH_PUBLIC_KEY,
  TF_VAR_subnet_id: VARS.SUBNET_ID,
  TF_VAR_vpc_id: VARS.VPC_ID,
};
const SECRETS = {
  DB_ROOT_PASSWORD: "simulated-root-password",
  APP_DB_PASSWORD: "simulated-app-password",
  SOURCE_HOST_TOKEN: "simulated-token",
  TFPLAN_PASSPHRASE: "simulated-passphrase",
};
const ENVIRONMENTS: RepositorySettings["environments"] = {
  "production-plan": { secrets: SECRETS },
  production: { secrets: { TFPLAN_PASSPHRASE: SECRETS.TFPLAN_PASSPHRASE } },
  release: {
    secrets: { SSH_PRIVATE_KEY: "-----BEGIN OPENSSH PRIVATE KEY-----\nsimulated\n-----END OPENSSH PRIVATE KEY-----" },
  },
};
const PULL_REQUEST: SimulatedEvent = {
  name: "pull_request",
  ref: "refs/pull/7/merge",
  payload: { pull_request: { number: 7, head: { repo: { full_name: "example-org/crm-host" } } } },
};
const DEPLOY: SimulatedEvent = { name: "workflow_dispatch", ref: "refs/heads/main" };
const SCHEDULE: SimulatedEvent = { name: "schedule", ref: "refs/heads/main" };
const PLACEHOLDERS = {
  TF_VAR_db_root_password: "placeholder-of-a-plan-without-secrets",
  TF_VAR_app_db_password: "placeholder-of-a-plan-without-secrets",
  TF_VAR_source_host_token: "placeholder-of-a-plan-without-secrets",
};

/** The state bucket of the example environments' settings (examples/dev.json). */
const BUCKET = "crm-host-tfstate-123456789012";

/** [step name, outcome] of each step of a job, for one readable comparison. */
function outcomes(job: JobResult): [string, string][] {
  return job.steps.map((step) => [step.name, step.outcome]);
}

/** The step of a job by name. */
function step(job: JobResult, name: string): StepResult {
  const found = job.steps.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`${job.id} has no step ${name}: ${job.steps.map((s) => s.name).join(", ")}`);
  return found;
}

/** The messages of a step's annotations of one level. */
function messages(result: StepResult, level: "error" | "notice"): string[] {
  return result.annotations.filter((annotation) => annotation.level === level).map((annotation) => annotation.message);
}

/** The steps of a plan job before the AWS credentials, all run. */
const PLAN_STEPS_BEFORE_AWS: [string, string][] = [
  ["actions/checkout", "success"],
  ["actions/download-artifact", "success"],
  ["Check the stack and the repository settings", "success"],
  ["hashicorp/setup-terraform", "success"],
];

/** The steps of a plan job from the AWS credentials on, all needing AWS. */
const PLAN_STEPS_NEEDING_AWS = (publish: string): [string, string][] => [
  ["aws-actions/configure-aws-credentials", "needs-aws"],
  ["terraform init", "needs-aws"],
  ["terraform plan", "needs-aws"],
  [publish, "needs-aws"],
];

/** Replaces the clone's tests, before the Test step, by `files` (the real skip helper is kept). */
function testFiles(files: Record<string, string>) {
  return (job: string, workflowStep: WorkflowStep, workspace: string): void => {
    if (job !== "test" || workflowStep.name !== "Test") return;
    const helper = readFileSync(join(workspace, "__tests__/support/required-tools.ts"), "utf8");
    rmSync(join(workspace, "__tests__"), { recursive: true, force: true });
    mkdirSync(join(workspace, "__tests__/support"), { recursive: true });
    writeFileSync(join(workspace, "__tests__/support/required-tools.ts"), helper);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(workspace, "__tests__", name), text);
  };
}
const PASSES = 'it("adds", () => {\n  expect(1 + 1).toBe(2);\n});\n';
const SKIPS =
  'import { describeWithTools } from "./support/required-tools";\n\n' +
  'describeWithTools("a test whose tool is missing", ["no-such-tool"], () => {\n' +
  '  it("would run the tool", () => undefined);\n  it("would run it again", () => undefined);\n});\n';
const FAILS = 'it("fails", () => {\n  expect(1 + 1).toBe(3);\n});\n';

describeWithTools(
  "the workflows, run on this machine",
  findEngine() ? [] : ["a Terraform engine ($TERRAFORM_BINARY_NAME)"],
  () => {
    const commit = commitUnderTest(ROOT);
    const runs: WorkflowRun[] = [];
    const start = (workflow: string, event: SimulatedEvent, settings: RepositorySettings): WorkflowRun => {
      const run = new WorkflowRun(ROOT, commit, workflow, event, settings);
      runs.push(run);
      return run;
    };
    afterAll(() => runs.forEach((run) => run.remove()));

    describe("terraform-plan.yml for a pull request of this repository", () => {
      let run: WorkflowRun;
      let jobs: Record<string, JobResult>;
      let test: JobResult;

      beforeAll(async () => {
        run = start(PLAN, PULL_REQUEST, { vars: VARS, environments: ENVIRONMENTS });
        jobs = await run.run({ beforeStep: testFiles({ "passes.test.ts": PASSES, "skips.test.ts": SKIPS }) });
        test = jobs.test;
      }, 15 * MINUTES);

      it("tests and synthesizes a fresh clone, and keeps the stacks for the plan jobs", () => {
        expect(outcomes(test)).toEqual([
          ["actions/checkout", "success"],
          ["actions/setup-node", "success"],
          ["hashicorp/setup-terraform", "success"],
          ["Install dependencies", "success"],
          ["Test", "success"],
          ["Synthesize", "success"],
          ["Keep the synthesized stacks for the plan jobs", "success"],
        ]);
        expect(test.name).toBe("test and synth (Node.js 20.19.0)");
        expect(step(test, "hashicorp/setup-terraform").note).toBe("Terraform v1.11.4");
        for (const stack of ["CrmHost-dev", "CrmHost-prod"]) {
          expect(existsSync(join(test.workspace, `cdktf.out/stacks/${stack}/cdk.tf.json`))).toBe(true);
        }
      });

      it("shows a notice for each test file that skipped tests, and for no other", () => {
        const testStep = step(test, "Test");
        expect(testStep.annotations).toEqual([
          {
            level: "notice",
            properties: { file: "__tests__/skips.test.ts", title: "2 of 2 tests skipped" },
            message:
              "__tests__/skips.test.ts: 2 of 2 tests did not run: a test whose tool is missing (skipped: needs no-such-tool)",
          },
        ]);
        expect(testStep.stdout).toContain("report-skipped: 2 tests skipped in 1 of 2 test files");
      });

      it(
        "fails the test step when a test fails, after the notices",
        async () => {
          const again = await run.run({
            only: ["test"],
            steps: ["Test"],
            beforeStep: testFiles({ "fails.test.ts": FAILS, "skips.test.ts": SKIPS }),
          });
          const testStep = step(again.test, "Test");
          expect({ outcome: testStep.outcome, exitCode: testStep.exitCode }).toEqual({
            outcome: "failure",
            exitCode: 1,
          });
          expect(messages(testStep, "notice")).toHaveLength(1);
          expect(testStep.stdout).toContain("report-skipped: 2 tests skipped in 1 of 2 test files");
        },
        5 * MINUTES,
      );

      it("plans without any secret: placeholders for the stack's secret variables, the optional variables passed, up to the AWS credentials", () => {
        const plan = jobs.plan;
        expect(plan.name).toBe("plan (pull request, no secrets)");
        expect(outcomes(plan)).toEqual([
          ...PLAN_STEPS_BEFORE_AWS,
          ...PLAN_STEPS_NEEDING_AWS("Publish the plan in the job summary"),
        ]);
        const check = step(plan, "Check the stack and the repository settings");
        expect(check.envAdded).toEqual({ ...PLACEHOLDERS, ...OPTIONAL_PASSED });
        expect(messages(check, "notice")).toEqual([
          "app_db_password db_root_password source_host_token get a placeholder: secret values never show in a plan, and this plan is never applied",
        ]);
        expect(check.stdout).toContain("check-stack: CrmHost-dev is ready to plan (backend s3, region us-east-1)");
      });

      it("runs neither the deploy nor the drift check", () => {
        expect(
          Object.entries(jobs)
            .filter(([, job]) => !job.ran)
            .map(([id]) => id),
        ).toEqual(["deploy-plan", "apply", "drift"]);
      });

      it("tests a pull request from a fork or from Dependabot, but plans neither (no OIDC token there)", () => {
        const fork = start(
          PLAN,
          {
            ...PULL_REQUEST,
            payload: { pull_request: { number: 8, head: { repo: { full_name: "someone/crm-host" } } } },
          },
          { vars: VARS },
        );
        const dependabot = start(PLAN, { ...PULL_REQUEST, actor: "dependabot[bot]" }, { vars: VARS });
        const unconfigured = start(PLAN, PULL_REQUEST, { vars: { ...VARS, AWS_PLAN_ROLE_ARN: "" } });
        for (const other of [fork, dependabot, unconfigured]) {
          expect({ test: other.jobWouldRun("test"), plan: other.jobWouldRun("plan") }).toEqual({
            test: true,
            plan: false,
          });
        }
      });

      it(
        "names every missing repository variable at once, and plans nothing",
        async () => {
          const bare = start(PLAN, PULL_REQUEST, {
            vars: { AWS_PLAN_ROLE_ARN: VARS.AWS_PLAN_ROLE_ARN, CRM_STACK_NAME: "CrmHost-prod" },
          });
          bare.putArtifact("synthesized", join(test.workspace, "cdktf.out"));
          const plan = (await bare.run({ only: ["plan"] })).plan;
          const check = step(plan, "Check the stack and the repository settings");
          expect(check.outcome).toBe("failure");
          expect(messages(check, "error")).toEqual(
            ["AWS_REGION", "KEY_PAIR_NAME", "SSH_PUBLIC_KEY", "SUBNET_ID"].map(
              (name) => `variable ${name} is not set (see docs/github-actions.md)`,
            ),
          );
          expect(plan.steps.slice(3).map((s) => s.outcome)).toEqual([
            "skipped",
            "skipped",
            "skipped",
            "skipped",
            "skipped",
          ]);
        },
        2 * MINUTES,
      );

      it(
        "refuses a stack whose state is local, and a stack that was not synthesized",
        async () => {
          const local = mkdtempSync(join(tmpdir(), "crm-local-stack-"));
          try {
            mkdirSync(join(local, "stacks/CrmHostStack"), { recursive: true });
            writeFileSync(
              join(local, "stacks/CrmHostStack/cdk.tf.json"),
              Testing.synth(new CrmHostStack(Testing.app(), exampleStackSettings())),
            );
            cpSync(join(test.workspace, "cdktf.out/stacks/CrmHost-dev"), join(local, "stacks/CrmHost-dev"), {
              recursive: true,
            });
            const errors: string[] = [];
            for (const stackName of ["CrmHostStack", "Nope"]) {
              const other = start(PLAN, PULL_REQUEST, { vars: { ...VARS, CRM_STACK_NAME: stackName } });
              other.putArtifact("synthesized", local);
              errors.push(
                ...messages(
                  step((await other.run({ only: ["plan"] })).plan, "Check the stack and the repository settings"),
                  "error",
                ),
              );
            }
            expect(errors).toEqual([
              'stack CrmHostStack keeps its state in the \'local\' backend, which a GitHub runner loses; set "backend": {"type": "s3", "bucket": …} in its settings file (docs/github-actions.md, step 2)',
              "cdktf.out/stacks/Nope/cdk.tf.json does not exist (synthesized: CrmHost-dev CrmHostStack); set the CRM_STACK_NAME variable to the stackName of one of your settings files",
            ]);
          } finally {
            rmSync(local, { recursive: true, force: true });
          }
        },
        2 * MINUTES,
      );

      describe("started by hand on main (a deploy)", () => {
        it(
          "plans in the production-plan environment with its secrets, and applies only after the plan",
          async () => {
            const deploy = start(PLAN, DEPLOY, { vars: VARS, environments: ENVIRONMENTS });
            deploy.putArtifact("synthesized", join(test.workspace, "cdktf.out"));
            const deployJobs = await deploy.run({ only: ["deploy-plan", "apply"] });
            expect(outcomes(deployJobs["deploy-plan"])).toEqual([
              ...PLAN_STEPS_BEFORE_AWS,
              ...PLAN_STEPS_NEEDING_AWS("Publish the plan in the job summary"),
              ["Encrypt the plan for the apply job", "needs-aws"],
              ["Keep the encrypted plan for the apply job", "needs-aws"],
            ]);
            const check = step(deployJobs["deploy-plan"], "Check the stack and the repository settings");
            expect(check.stdout).toContain(
              "check-stack: secret variables given: app_db_password db_root_password source_host_token",
            );
            expect(check.envAdded).toEqual(OPTIONAL_PASSED);
            // The apply job waits for the plan's artifact, made after the AWS credentials.
            expect(deployJobs.apply.ran).toBe(true);
            expect(deployJobs.apply.steps.map((s) => s.outcome)).toEqual(Array(6).fill("needs-aws"));
            expect(deployJobs.apply.steps[0].note).toBe(
              "its artifact plan comes from a step that needs AWS (deploy-plan: Keep the encrypted plan for the apply job)",
            );
            expect({ plan: deploy.jobWouldRun("plan"), drift: deploy.jobWouldRun("drift") }).toEqual({
              plan: false,
              drift: false,
            });
          },
          2 * MINUTES,
        );

        it(
          "names each secret missing from the production-plan environment",
          async () => {
            const deploy = start(PLAN, DEPLOY, { vars: VARS, environments: { "production-plan": {} } });
            deploy.putArtifact("synthesized", join(test.workspace, "cdktf.out"));
            const check = step(
              (await deploy.run({ only: ["deploy-plan"] }))["deploy-plan"],
              "Check the stack and the repository settings",
            );
            expect(check.outcome).toBe("failure");
            expect(messages(check, "error")).toEqual([
              "secret APP_DB_PASSWORD (Terraform variable app_db_password) is not set (see docs/github-actions.md)",
              "secret DB_ROOT_PASSWORD (Terraform variable db_root_password) is not set (see docs/github-actions.md)",
              "secret SOURCE_HOST_TOKEN (Terraform variable source_host_token) is not set (see docs/github-actions.md)",
              "secret TFPLAN_PASSPHRASE is not set (see docs/github-actions.md)",
            ]);
          },
          2 * MINUTES,
        );

        it(
          "needs no secret but the passphrase for a stack whose secrets are in Parameter Store (examples/prod.json)",
          async () => {
            const deploy = start(PLAN, DEPLOY, {
              vars: { ...VARS, CRM_STACK_NAME: "CrmHost-prod" },
              environments: { "production-plan": { secrets: { TFPLAN_PASSPHRASE: "simulated" } } },
            });
            deploy.putArtifact("synthesized", join(test.workspace, "cdktf.out"));
            const check = step(
              (await deploy.run({ only: ["deploy-plan"] }))["deploy-plan"],
              "Check the stack and the repository settings",
            );
            expect(check.outcome).toBe("success");
            expect(check.stdout).toContain(
              "check-stack: CrmHost-prod declares no secret variable: nothing secret to give",
            );
          },
          2 * MINUTES,
        );

        it("plans and applies nothing when started on another branch", () => {
          const elsewhere = start(
            PLAN,
            { ...DEPLOY, ref: "refs/heads/feature" },
            { vars: VARS, environments: ENVIRONMENTS },
          );
          expect(["test", "plan", "deploy-plan", "drift"].map((id) => elsewhere.jobWouldRun(id))).toEqual([
            true,
            false,
            false,
            false,
          ]);
        });
      });

      describe("on its schedule (the drift check)", () => {
        it(
          "checks main's stack without secrets, up to the AWS credentials",
          async () => {
            const drift = start(PLAN, SCHEDULE, { vars: VARS, environments: ENVIRONMENTS });
            drift.putArtifact("synthesized", join(test.workspace, "cdktf.out"));
            expect(["plan", "deploy-plan"].map((id) => drift.jobWouldRun(id))).toEqual([false, false]);
            const job = (await drift.run({ only: ["drift"] })).drift;
            expect(job.name).toBe("drift check (main)");
            expect(outcomes(job)).toEqual([
              ...PLAN_STEPS_BEFORE_AWS,
              ...PLAN_STEPS_NEEDING_AWS("Publish the drift check in the job summary"),
              ["Fail when the stack drifted", "needs-aws"],
            ]);
            expect(step(job, "Check the stack and the repository settings").envAdded).toEqual({
              ...PLACEHOLDERS,
              ...OPTIONAL_PASSED,
            });
          },
          2 * MINUTES,
        );
      });
    });

    describeWithTools(
      "terraform-plan.yml's plan, apply and drift jobs to their end, through the real AWS provider against moto",
      [
        ...(findMotoServer() ? [] : ["moto_server"]),
        ...(providerSetup ? [] : ["the project's Terraform CLI configuration ($TF_CLI_CONFIG_FILE)"]),
      ],
      () => {
        // The stack as synthesized, run by hashicorp/aws from the project's CLI configuration (the machine's
        // mirror: __tests__/support/real-provider.ts) against a moto server seeded as an account would be,
        // its state in moto's S3 under the backend of examples/dev.json. The copy differs from what `npx cdktf
        // synth` writes only as the real-provider test's copies do (the mirror's provider version, moto's
        // missing APIs dropped), and in ignoring the attributes moto does not keep (moto-gaps.json's drift:
        // that test proves they are all there is), so that a deployed stack can be found unchanged.
        let moto: MotoServer;
        let aws: Record<string, string>;
        let artifact: string;
        let settings: RepositorySettings;
        const run = async (
          event: SimulatedEvent,
          ids: string[],
          vars: Record<string, string> = settings.vars,
        ): Promise<Record<string, JobResult>> => {
          const workflowRun = new WorkflowRun(ROOT, commit, PLAN, event, { ...settings, vars }, aws);
          runs.push(workflowRun);
          workflowRun.putArtifact("synthesized", artifact);
          return workflowRun.run({ only: ids });
        };
        const planJob = async (event: SimulatedEvent, id: string, vars?: Record<string, string>): Promise<JobResult> =>
          (await run(event, [id], vars))[id];
        /** The copy's managed resources: what a first plan adds. */
        const resources = (): number =>
          Object.values(
            JSON.parse(readFileSync(join(artifact, "stacks/CrmHost-dev/cdk.tf.json"), "utf8")).resource as Record<
              string,
              object
            >,
          ).reduce((sum, byName) => sum + Object.keys(byName).length, 0);
        const stateObjects = async (): Promise<string[]> =>
          [...(await moto.http("GET", `/${BUCKET}?list-type=2`)).body.matchAll(/<Key>([^<]+)<\/Key>/g)].map(
            (match) => match[1],
          );

        beforeAll(async () => {
          moto = await MotoServer.start(findMotoServer()!, 30_000, { MOTO_IAM_LOAD_MANAGED_POLICIES: "true" });
          expect((await moto.http("PUT", `/${BUCKET}`)).status).toBe(200);
          const base = motoEnvironment(moto.endpoint, VARS.AWS_REGION);
          // The default VPC with DNS hostnames on, and its first subnet, as the repository variables name them.
          const vpc = (await awsJson(["ec2", "describe-vpcs", "--filters", "Name=is-default,Values=true"], base))
            .Vpcs[0].VpcId as string;
          await awsJson(
            ["ec2", "modify-vpc-attribute", "--vpc-id", vpc, "--enable-dns-hostnames", '{"Value":true}'],
            base,
          );
          const subnet = (
            (await awsJson(["ec2", "describe-subnets", "--filters", `Name=vpc-id,Values=${vpc}`], base)).Subnets as {
              SubnetId: string;
              AvailabilityZone: string;
            }[]
          ).sort((a, b) => a.AvailabilityZone.localeCompare(b.AvailabilityZone))[0];
          settings = {
            vars: {
              ...VARS,
              CRM_STACK_NAME: "CrmHost-dev",
              VPC_ID: vpc,
              SUBNET_ID: subnet.SubnetId,
              AVAILABILITY_ZONE: subnet.AvailabilityZone,
              SSH_PUBLIC_KEY: newKey("ed25519").line,
            },
            environments: ENVIRONMENTS,
          };
          artifact = mkdtempSync(join(tmpdir(), "crm-real-provider-"));
          const dev = exampleStackSettings(JSON.parse(readFileSync(join(ROOT, "examples/dev.json"), "utf8")));
          const synthesized = JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), dev)));
          const copy = ignoringMotoDrift(
            providerCopy(synthesized, providerSetup!.version, droppedTypes(gaps)),
            gaps,
          ) as any;
          copy.terraform.backend = synthesized.terraform.backend; // the stack's own S3 backend, its endpoint moto's (below)
          mkdirSync(join(artifact, "stacks/CrmHost-dev"), { recursive: true });
          writeFileSync(join(artifact, "stacks/CrmHost-dev/cdk.tf.json"), JSON.stringify(copy, null, 2));
          writeFileSync(
            join(artifact, "moto.s3.tfbackend"),
            [
              `endpoints = { s3 = "${moto.endpoint}" }`,
              "use_path_style = true",
              "skip_credentials_validation = true",
              "skip_requesting_account_id = true",
              "skip_metadata_api_check = true",
              "skip_region_validation = true",
              "",
            ].join("\n"),
          );
          // What configure-aws-credentials stands for: credentials (moto takes any) and every service's endpoint
          // (AWS_ENDPOINT_URL), the project's CLI configuration (the provider from the mirror), and S3's endpoint
          // for the backend of `terraform init` (TF_CLI_ARGS_init: the workflow's command line stays as it is).
          aws = {
            ...base,
            AWS_CONFIG_FILE: "/dev/null",
            AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
            TF_CLI_CONFIG_FILE: providerSetup!.cliConfig,
            TF_CLI_ARGS_init: `-backend-config=${join(artifact, "moto.s3.tfbackend")}`,
          };
        }, 2 * MINUTES);
        afterAll(async () => {
          await moto?.stop();
          if (artifact) rmSync(artifact, { recursive: true, force: true });
        }, TEARDOWN_MS);

        it(
          "plans a pull request with the placeholders, takes no lock, and publishes the plan without any secret",
          async () => {
            const plan = await planJob(PULL_REQUEST, "plan");
            expect(
              plan.steps.map((s) => [s.name, s.outcome, s.outcome === "failure" ? s.stdout + s.stderr : ""]),
            ).toEqual(plan.steps.map((s) => [s.name, "success", ""]));
            expect(step(plan, "terraform init").stdout).toContain(
              `Installing hashicorp/aws v${providerSetup!.version}`,
            );
            expect(step(plan, "terraform plan").outputs).toEqual({ "exit-code": "2" });
            const summary = step(plan, "Publish the plan in the job summary").summary;
            expect(summary).toMatch(
              new RegExp(
                `^### Terraform plan of \`CrmHost-dev\`: Plan: ${resources()} to add, 0 to change, 0 to destroy\\.\n\nPlanned without the secrets`,
              ),
            );
            expect(summary).toContain("# aws_instance.crm_host will be created");
            expect(summary).not.toContain("placeholder-of-a-plan-without-secrets");
            expect(await stateObjects()).toEqual([]);
            expect(existsSync(join(plan.workspace, "cdktf.out/stacks/CrmHost-dev/plan.txt"))).toBe(false);
          },
          10 * MINUTES,
        );

        it(
          "publishes a failed plan's errors, and fails",
          async () => {
            const plan = await planJob(PULL_REQUEST, "plan", { ...settings.vars, AVAILABILITY_ZONE: "nowhere" });
            expect(outcomes(plan).slice(-2)).toEqual([
              ["terraform plan", "failure"],
              ["Publish the plan in the job summary", "success"],
            ]);
            const summary = step(plan, "Publish the plan in the job summary").summary;
            expect(summary).toMatch(/^### Terraform plan of `CrmHost-dev`: terraform plan failed\n/);
            expect(flatten(summary)).toContain(
              'Invalid value for variable "availability_zone": expected an availability zone name',
            );
          },
          10 * MINUTES,
        );

        it(
          "fails the drift check before the deploy, deploys the reviewed plan, finds the stack matching main, then a change made by hand",
          async () => {
            const drifted = await planJob(SCHEDULE, "drift");
            expect(outcomes(drifted).slice(-3)).toEqual([
              ["terraform plan", "success"],
              ["Publish the drift check in the job summary", "success"],
              ["Fail when the stack drifted", "failure"],
            ]);
            expect(drifted.conclusion).toBe("failure");
            expect(step(drifted, "Publish the drift check in the job summary").summary).toMatch(
              new RegExp(
                `^### Drift check of \`CrmHost-dev\`: Plan: ${resources()} to add, 0 to change, 0 to destroy\\.\n\n\\*\\*The deployed stack differs from main\\.\\*\\*`,
              ),
            );
            expect(messages(step(drifted, "Fail when the stack drifted"), "error")).toEqual([
              "the deployed stack CrmHost-dev differs from main: see the plan in the run's summary",
            ]);

            // The deploy: the plan with the production-plan environment's secrets, encrypted, then applied by the apply job.
            const deploy = await run(DEPLOY, ["deploy-plan", "apply"]);
            for (const job of [deploy["deploy-plan"], deploy.apply]) {
              expect(
                job.steps.map((s) => [s.name, s.outcome, s.outcome === "failure" ? s.stdout + s.stderr : ""]),
              ).toEqual(job.steps.map((s) => [s.name, "success", ""]));
            }
            const applied = step(deploy.apply, "terraform apply (the saved plan, nothing else)");
            expect(applied.stdout).toContain(
              `Apply complete! Resources: ${resources()} added, 0 changed, 0 destroyed.`,
            );
            const everything = [...deploy["deploy-plan"].steps, ...deploy.apply.steps]
              .map((s) => s.stdout + s.stderr + s.summary)
              .join("\n");
            for (const secret of [SECRETS.DB_ROOT_PASSWORD, SECRETS.APP_DB_PASSWORD, SECRETS.SOURCE_HOST_TOKEN])
              expect(everything).not.toContain(secret);
            // The state in the bucket, its lock released.
            expect(await stateObjects()).toEqual(["crm-host/dev/terraform.tfstate"]);

            const matching = await planJob(SCHEDULE, "drift");
            expect(matching.conclusion).toBe("success");
            expect(outcomes(matching).slice(-1)).toEqual([["Fail when the stack drifted", "skipped"]]);
            expect(step(matching, "Publish the drift check in the job summary").summary).toMatch(
              /^### Drift check of `CrmHost-dev`: No changes\. Your infrastructure matches the configuration\.\n\nThe deployed stack matches main\.\n/,
            );

            // A change made outside Terraform: the instance's Name tag, by hand.
            const instance = (
              await awsJson(
                [
                  "ec2",
                  "describe-instances",
                  "--filters",
                  "Name=tag:Name,Values=CrmHost-dev/CrmServer",
                  "Name=instance-state-name,Values=running",
                ],
                aws,
              )
            ).Reservations[0].Instances[0].InstanceId as string;
            await awsJson(
              ["ec2", "create-tags", "--resources", instance, "--tags", "Key=Name,Value=changed-by-hand"],
              aws,
            );
            const changed = await planJob(SCHEDULE, "drift");
            expect(changed.conclusion).toBe("failure");
            const summary = step(changed, "Publish the drift check in the job summary").summary;
            expect(summary).toMatch(
              /^### Drift check of `CrmHost-dev`: Plan: 0 to add, 1 to change, 0 to destroy\.\n\n\*\*The deployed stack differs from main\.\*\*/,
            );
            expect(summary).toContain("# aws_instance.crm_host will be updated in-place");
            expect(summary).toContain('"changed-by-hand" -> "CrmHost-dev/CrmServer"');
            expect(await stateObjects()).toEqual(["crm-host/dev/terraform.tfstate"]);
          },
          20 * MINUTES,
        );
      },
    );

    describe("release.yml", () => {
      const settings: RepositorySettings = {
        vars: {
          ...VARS,
          SSH_HOST_KEYS: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB\n",
        },
        environments: ENVIRONMENTS,
      };
      const release = (ref: string, more: Partial<RepositorySettings> = {}, branch = "refs/heads/main"): WorkflowRun =>
        start(RELEASE, { name: "workflow_dispatch", ref: branch, inputs: { ref } }, { ...settings, ...more });

      it(
        "checks the request, installs and synthesizes main, up to the AWS credentials",
        async () => {
          const job = (await release("v1.4.0").run()).release;
          expect(outcomes(job)).toEqual([
            ["actions/checkout", "success"],
            ["Check the release request", "success"],
            ["actions/setup-node", "success"],
            ["hashicorp/setup-terraform", "success"],
            ["Install dependencies", "success"],
            ["Synthesize", "success"],
            ["aws-actions/configure-aws-credentials", "needs-aws"],
            ["terraform init", "needs-aws"],
            ["Release", "needs-aws"],
          ]);
          expect(step(job, "Check the release request").stdout).toContain(
            "release: request checked: v1.4.0 to CrmHost-dev, 1 host key(s)",
          );
          expect(existsSync(join(job.workspace, "cdktf.out/stacks/CrmHost-dev/cdk.tf.json"))).toBe(true);
        },
        10 * MINUTES,
      );

      it.each([
        [
          "--upload-pack=touch /tmp/x",
          {},
          "Bad ref",
          "ref '--upload-pack=touch /tmp/x' is not a git branch, tag or commit name",
        ],
        ["v1..2", {}, "Bad ref", "ref 'v1..2' is not a git branch, tag or commit name"],
        ["v1.4.0", { vars: { ...VARS } }, "Missing setting", "variable SSH_HOST_KEYS is not set"],
        [
          "v1.4.0",
          { vars: { ...VARS, SSH_HOST_KEYS: "\nssh-ed25519 AAAA\nAAAAC3NzaC1lZDI1NTE5 ssh-ed25519" } },
          "Bad setting",
          "variable SSH_HOST_KEYS, line 3: expected 'TYPE BASE64' with TYPE ssh-ed25519, ssh-rsa or ecdsa-sha2-nistp256/384/521, found a line starting 'AAAAC3NzaC1lZDI1NTE5'",
        ],
      ])(
        "refuses %j (%#) before installing anything",
        async (ref, more, title, text) => {
          const job = (await release(ref, more).run()).release;
          const check = step(job, "Check the release request");
          expect(check.outcome).toBe("failure");
          expect(check.annotations).toEqual([expect.objectContaining({ level: "error", properties: { title } })]);
          expect(check.annotations[0].message).toContain(text);
          expect(job.steps.slice(2).every((s) => s.outcome === "skipped")).toBe(true);
        },
        2 * MINUTES,
      );

      it("releases nothing when started on another branch", () => {
        expect(release("v1.4.0", {}, "refs/heads/feature").jobWouldRun("release")).toBe(false);
      });
    });
  },
);
