/**
 * Every example stack (settings/example.json, examples/*.json) through the real AWS provider
 * (hashicorp/aws from the project's CLI configuration: the machine's mirror, or the registry) against
 * moto seeded as an account would be: DNS hostnames on in the VPC, the hosted zone of the examples'
 * domain, and the secrets `npm run secrets -- <stack> set` puts. Each stack: `validate`,
 * `plan`, `apply`, a second `plan` that changes nothing but moto's listed gaps (moto-gaps.json), and
 * `destroy` as the docs say (docs/operations.md: the data volume out of the state first;
 * docs/scale-out.md: deletion protection off first). Stacks run side by side, except the two that
 * share the domain's record, each lane against a moto server of its own: moto's backends are not
 * made for concurrent requests (a shared server answered a create it had carried out with an error, and the
 * provider's retry then met its own name: InvalidGroup.Duplicate). A failure shows moto's errors.
 */
import { execFile } from "child_process";
import { Testing } from "cdktf";
import { readdirSync } from "fs";
import { join, resolve } from "path";
import { CrmHostStack } from "../../main";
import { DATABASE_ENGINE_VERSION, databaseIdentifier } from "../../constructs/managed-database";
import { loadStackSettings } from "../../settings/stack-settings";
import { findMotoServer, MotoServer } from "../support/moto-server";
import {
  droppedTypes,
  findProviderSetup,
  motoEnvironment,
  plannedChangeDetails,
  providerCopy,
  seedAccount,
  stackVariables,
} from "../support/real-provider";
import { describeWithEngine, EngineResult, EngineWorkspace } from "../support/terraform-engine";
import gaps from "./moto-gaps.json";
import { TEARDOWN_MS } from "../support/teardown";

const ROOT = resolve(__dirname, "../..");
const FILES = [
  join(ROOT, "settings/example.json"),
  ...readdirSync(join(ROOT, "examples"))
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => join(ROOT, "examples", name)),
];
/** Lanes run side by side, the stacks of a lane one after the other: prod and scale-out both own crm.example.com's record. */
const LANES = [["prod.json", "scale-out.json"], ["example.json"], ["dev.json"]];
const STEP_MS = 5 * 60_000;
const REGION = "us-east-1";
const setup = findProviderSetup();
const moto = findMotoServer();

type Step = "validate" | "plan" | "apply" | "replan" | "new-image" | "unprotect" | "destroy";
/** A newer image than the stacks' default parameter names, in moto's copy of the public parameters. */
const NEWER_IMAGE_PARAMETER = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.12-x86_64";
const DROPPED = droppedTypes(gaps);
interface Outcome {
  readonly stack: string;
  readonly steps: { step: Step; code: number; seconds: number; output: string }[];
  changes?: string[];
  details?: Record<string, unknown>;
  newImage?: { template: string; group: string; imageId: unknown };
  left?: string;
  error?: string;
}

function aws(args: string[], env: Record<string, string>): Promise<EngineResult> {
  // --endpoint-url as well: the AWS CLI v1 ignores AWS_ENDPOINT_URL for some services (RDS).
  return new Promise((done) =>
    execFile(
      "aws",
      [
        ...args,
        "--endpoint-url",
        env.AWS_ENDPOINT_URL,
        "--output",
        "json",
        "--cli-read-timeout",
        "20",
        "--cli-connect-timeout",
        "5",
      ],
      { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

async function awsJson(args: string[], env: Record<string, string>): Promise<any> {
  const result = await aws(args, env);
  if (result.code !== 0) throw new Error(`aws ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.trim() ? JSON.parse(result.stdout) : {};
}

/** `npm run deploy -- <stack> --auto-approve`, the app being deploy-app.ts, its output in `dir`/cdktf.out; bounded. */
function npmDeploy(stack: string, dir: string, env: Record<string, string>): Promise<EngineResult> {
  // No --skip-provider-lock: the npm script passes it (scripts/cdktf.sh: the lock asks the registry, not the mirror).
  const args = [
    "run",
    "-s",
    "deploy",
    "--",
    stack,
    "--auto-approve",
    "--no-color",
    "--output",
    join(dir, "cdktf.out"),
    "--app",
    "node --import tsx __tests__/support/deploy-app.ts",
  ];
  return new Promise((done) =>
    execFile(
      "npm",
      args,
      {
        cwd: ROOT,
        env: { ...process.env, ...env, CI: "1", FORCE_COLOR: "0" },
        timeout: 2 * STEP_MS,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

/** `terraform show -json` of a saved plan. */
async function show(workspace: EngineWorkspace, env: Record<string, string>, plan: string): Promise<any> {
  const shown = await workspace.run(["show", "-json", plan], env, {}, STEP_MS);
  if (shown.code !== 0) throw new Error(`terraform show ${plan}: ${shown.stderr}`);
  return JSON.parse(shown.stdout);
}

/** A record of the site's name already there (made by hand, or by the stack the site moves from): the stack takes it over. */
async function existingRecord(hostedZone: string, name: string, env: Record<string, string>): Promise<void> {
  const zones = (await awsJson(["route53", "list-hosted-zones-by-name", "--dns-name", hostedZone], env))
    .HostedZones as { Id: string; Name: string }[];
  const zone = zones.find((z) => z.Name === `${hostedZone}.`)!.Id;
  await awsJson(
    [
      "route53",
      "change-resource-record-sets",
      "--hosted-zone-id",
      zone,
      "--change-batch",
      JSON.stringify({
        Changes: [
          {
            Action: "UPSERT",
            ResourceRecordSet: { Name: name, Type: "A", TTL: 60, ResourceRecords: [{ Value: "192.0.2.10" }] },
          },
        ],
      }),
    ],
    env,
  );
}

/** What moto failed to answer (its 5xx lines and tracebacks), for a stack's failure message; empty when none. */
function serverErrors(server: MotoServer): string {
  const lines = server.output().split("\n");
  const at = lines.flatMap((line, i) => (/" 5\d\d /.test(line) || line.startsWith("Traceback") ? [i] : []));
  return at.length
    ? `\nmoto's errors:\n${at
        .slice(0, 5)
        .map((i) => lines.slice(i, i + 30).join("\n"))
        .join("\n")}`
    : "";
}

describeWithEngine(
  "every example stack through the real AWS provider against moto",
  (engine) => {
    const outcomes = new Map<string, Outcome>();
    const servers: MotoServer[] = [];
    let probes: { api: string; code: number; output: string }[] = [];
    let seconds = 0;
    let newerImage = "";

    async function runStack(
      file: string,
      server: MotoServer,
      base: Record<string, string>,
      subnets: string[],
    ): Promise<Outcome> {
      const settings = loadStackSettings(file);
      const outcome: Outcome = { stack: file.slice(ROOT.length + 1), steps: [] };
      const scaleOut = settings.provisioning.topology === "scale-out";
      const json = JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), settings)));
      const workspace = new EngineWorkspace(engine, {});
      // The state file by its full path: `npm run deploy` (the scale-out's apply) runs Terraform in its own output directory.
      const statePath = join(workspace.dir, "terraform.tfstate");
      workspace.writeConfiguration(providerCopy(json, setup!.version, DROPPED, statePath));
      const env = { ...base, ...stackVariables(settings, subnets) };
      const step = async (
        name: Step,
        args: string[],
        ok: (code: number) => boolean = (code) => code === 0,
      ): Promise<EngineResult> => {
        const start = Date.now();
        const result = await workspace.run([...args, "-no-color"], env, {}, STEP_MS);
        outcome.steps.push({
          step: name,
          code: result.code,
          seconds: Math.round((Date.now() - start) / 100) / 10,
          output: result.stdout + result.stderr,
        });
        if (!ok(result.code)) throw new Error(`${outcome.stack}: ${name} exited ${result.code}`);
        return result;
      };
      try {
        const domain = settings.provisioning.domain;
        if (domain) await existingRecord(domain.hostedZone, domain.name, base);
        const init = await workspace.run(["init", "-input=false", "-no-color"], env, {}, STEP_MS);
        if (init.code !== 0) throw new Error(`${outcome.stack}: init failed:\n${init.stdout}${init.stderr}`);
        await step("validate", ["validate"]);
        await step("plan", ["plan", "-input=false", "-out=first.plan"]);
        if (scaleOut) {
          // The user's command, once: `npm run deploy` (tsc, then cdktf deploy), its app rewritten as this copy is (deploy-app.ts).
          const start = Date.now();
          const deployed = await npmDeploy(settings.stackName, workspace.dir, {
            ...env,
            CRM_SETTINGS: file,
            CRM_AWS_PROVIDER_VERSION: setup!.version ?? "",
            CRM_TEST_STATE_FILE: statePath,
          });
          outcome.steps.push({
            step: "apply",
            code: deployed.code,
            seconds: Math.round((Date.now() - start) / 100) / 10,
            output: deployed.stdout + deployed.stderr,
          });
          if (deployed.code !== 0) throw new Error(`${outcome.stack}: npm run deploy exited ${deployed.code}`);
        } else {
          await step("apply", ["apply", "-input=false", "first.plan"]);
        }
        // Planned again with a newer image in the parameter: the hosts hold theirs (an instance ignores its AMI, the template its image_id).
        const newer = ["-var", `image_parameter=${NEWER_IMAGE_PARAMETER}`];
        await step(
          "replan",
          ["plan", "-input=false", ...newer, "-out=second.plan", "-detailed-exitcode"],
          (code) => code === 0 || code === 2,
        );
        outcome.details = plannedChangeDetails(await show(workspace, env, "second.plan"));
        outcome.changes = Object.keys(outcome.details).sort();
        if (scaleOut) {
          // docs/scale-out.md, "Releases and images": the new image only by replacing the template (planned: moto has no instance refresh).
          await step("new-image", [
            "plan",
            "-input=false",
            ...newer,
            "-replace=aws_launch_template.crm_hosts",
            "-out=image.plan",
          ]);
          const changes = (await show(workspace, env, "image.plan")).resource_changes as {
            address: string;
            change: { actions: string[]; after: { image_id?: unknown } };
          }[];
          const of = (address: string) => changes.find((c) => c.address === address)?.change;
          outcome.newImage = {
            template: of("aws_launch_template.crm_hosts")!.actions.join("+"),
            group: of("aws_autoscaling_group.crm_hosts")!.actions.join("+"),
            imageId: of("aws_launch_template.crm_hosts")!.after.image_id,
          };
          // docs/scale-out.md, "Destroying": deletion protection off by an apply, then destroy; targeted, as moto's
          // launch template drift would otherwise update the group, whose instance refresh moto lacks (moto-gaps.json).
          await step("unprotect", [
            "apply",
            "-input=false",
            "-auto-approve",
            "-target=aws_db_instance.crm_database",
            "-var",
            "database_deletion_protection=false",
          ]);
        } else {
          // docs/operations.md, "Destroying and the data volume": keep the volume, remove the rest.
          await step("unprotect", ["state", "rm", "aws_ebs_volume.crm_data"]);
        }
        await step("destroy", ["destroy", "-input=false", "-auto-approve"]);
        outcome.left = (await workspace.run(["state", "list"], env, {}, STEP_MS)).stdout;
      } catch (error) {
        outcome.error = `${(error as Error).message}${serverErrors(server)}`;
      } finally {
        workspace.remove();
      }
      return outcome;
    }

    beforeAll(async () => {
      const start = Date.now();
      const byName = new Map(FILES.map((file) => [file.split("/").pop()!, file]));
      expect(LANES.flat().sort()).toEqual([...byName.keys()].sort());
      await Promise.all(
        LANES.map(async (lane, index) => {
          const server = await MotoServer.start(moto!, 30_000, { MOTO_IAM_LOAD_MANAGED_POLICIES: "true" });
          servers.push(server);
          const base = { ...motoEnvironment(server.endpoint, REGION), TF_CLI_CONFIG_FILE: setup!.cliConfig };
          // Seeded as an account would be: the default VPC with DNS hostnames, the examples' hosted zone, the secrets (below).
          const settings = lane.map((name) => ({
            file: byName.get(name)!,
            settings: loadStackSettings(byName.get(name)!),
          }));
          // An earlier deployment's final snapshot, under the name a fixed final_snapshot_identifier would give again.
          for (const { settings: s } of settings.filter(({ settings: s }) => s.provisioning.topology === "scale-out")) {
            const earlier = `${databaseIdentifier(s.stackName)}-earlier`;
            await awsJson(
              [
                "rds",
                "create-db-instance",
                "--db-instance-identifier",
                earlier,
                "--engine",
                "mariadb",
                "--engine-version",
                DATABASE_ENGINE_VERSION,
                "--db-instance-class",
                "db.t4g.micro",
                "--master-username",
                "admin",
                "--master-user-password",
                "earlier-Pass-1",
                "--allocated-storage",
                "20",
              ],
              base,
            );
            await awsJson(
              [
                "rds",
                "delete-db-instance",
                "--db-instance-identifier",
                earlier,
                "--final-db-snapshot-identifier",
                `${databaseIdentifier(s.stackName)}-final`,
              ],
              base,
            );
          }
          const subnets = await seedAccount(settings, base);
          if (index === 0) {
            newerImage = (await awsJson(["ssm", "get-parameter", "--name", NEWER_IMAGE_PARAMETER], base)).Parameter
              .Value;
            probes = await Promise.all(
              gaps.missing.map(async (gap) => {
                const result = await aws(gap.probe, base);
                return { api: gap.api, code: result.code, output: result.stdout + result.stderr };
              }),
            );
          }
          for (const name of lane) outcomes.set(name, await runStack(byName.get(name)!, server, base, subnets));
        }),
      );
      seconds = Math.round((Date.now() - start) / 1000);
      console.log(
        `real-provider: hashicorp/aws ${setup!.version ?? "(registry)"} against moto, ${seconds} s in all\n${[
          ...outcomes.values(),
        ]
          .map(
            (o) =>
              `  ${o.stack}: ${o.steps.map((s) => `${s.step} ${s.seconds} s`).join(", ")}${o.error ? ` FAILED: ${o.error}` : ""}`,
          )
          .join("\n")}`,
      );
    }, 20 * 60_000);

    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
    }, TEARDOWN_MS);

    it.each(LANES.flat())(
      "%s: validates, plans, applies (over an existing record of its name), plans again (with a newer image) with nothing but moto's listed gaps, and is destroyed (beside an earlier deployment's final snapshot)",
      (name) => {
        const outcome = outcomes.get(name)!;
        const failed = outcome.steps.find((s) => s.code !== 0 && !(s.step === "replan" && s.code === 2));
        expect({ error: outcome.error, output: failed?.output.slice(-4000) }).toEqual({
          error: undefined,
          output: undefined,
        });
        const present = new Set(
          outcome.steps
            .find((s) => s.step === "plan")!
            .output.match(/^ {2}# \S+/gm)!
            .map((line) => line.slice(4)),
        );
        const allowed = gaps.drift.flatMap((gap) => gap.attributes.map((attribute) => `${gap.address} ${attribute}`));
        // Every change of the second plan is a listed gap of moto, and every gap listed for a resource of this stack shows.
        expect(
          Object.fromEntries(
            outcome
              .changes!.filter((change) => !allowed.includes(change))
              .map((change) => [change, outcome.details![change]]),
          ),
        ).toEqual({});
        const expected = gaps.drift
          .filter((gap) => present.has(gap.address))
          .flatMap((gap) => gap.attributes.map((a) => `${gap.address} ${a}`));
        expect(expected.filter((gap) => !outcome.changes!.includes(gap))).toEqual([]);
        expect(outcome.left).toBe("");
        if (outcome.newImage) {
          // The new image only by replacing the template: a new one first, then the group moves to it.
          expect(outcome.newImage).toEqual({ template: "create+delete", group: "update", imageId: newerImage });
        }
      },
    );

    it("lists in moto-gaps.json only gaps that are still there: each missing API still fails, each drift shows in some stack", () => {
      expect(probes.filter((probe) => probe.code === 0)).toEqual([]);
      const seen = new Set([...outcomes.values()].flatMap((o) => o.changes ?? []));
      expect(
        gaps.drift.flatMap((gap) => gap.attributes.map((a) => `${gap.address} ${a}`)).filter((gap) => !seen.has(gap)),
      ).toEqual([]);
    });
  },
  [
    ...(setup ? [] : ["the project's Terraform CLI configuration ($TF_CLI_CONFIG_FILE)"]),
    ...(moto ? [] : ["moto_server"]),
  ],
);
