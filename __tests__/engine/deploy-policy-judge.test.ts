/**
 * The deploy role's policy (docs/deploy-role-policy.json, as `npx tsx scripts/docs.ts` generates it) under
 * an authorizing judge: moto, its IAM authorization switched on once the account is seeded, and an IAM
 * user holding exactly that policy applies and destroys example stacks through the real AWS provider (the
 * copies of __tests__/engine/real-provider.test.ts: the mirror's provider version, moto's missing APIs
 * dropped, a local state file). examples/prod.json's single host, with deleteDataVolumeOnDestroy, so that
 * its destroy deletes the data volume after the final snapshot; and examples/scale-out.json (its database's
 * deletion protection off first, as docs/scale-out.md says).
 *
 * What it proves: every AWS action the provider calls for these stacks' apply and destroy, the volume's
 * final snapshot (a replacement of the volume takes the same CreateSnapshot and DeleteVolume path) and the
 * database's deletion-protection update among them, is named in the policy (moto answers AccessDenied for
 * any other). What it does not: that the policy's resource scoping and conditions are right (moto's judge
 * matches action names and takes every resource as `*`: the TerraformState statements' buckets and the
 * state key's ARN are checked by __tests__/docs/deploy-policy.test.ts only, on paper), the state backend's
 * own calls (the copies use a local state file), Data Lifecycle Manager's (dropped: moto lacks it), and
 * the calls of other updates (a changed variable, a new image).
 *
 * moto names an action by the request's signing name, which for two services is not IAM's prefix:
 * CloudWatch signs as `monitoring` and the Resource Groups Tagging API as `tagging`. The user's policy is
 * the generated one with each `cloudwatch:` and `tag:` action also under those names, and nothing else.
 * And moto's judge cannot check a signed GET without a query string (it hashes the request's headers in
 * place of the empty body, so it answers SignatureDoesNotMatch to every Route 53 read): Route 53 is a
 * second, unjudged moto server (AWS_ENDPOINT_URL_ROUTE_53), and the `route53:` actions are not proven
 * here. A probe shows the judge still refuses the user's Route 53 read; when moto mends it, the probe
 * fails, and Route 53 can join the judged server.
 */
import { Testing } from "cdktf";
import { readFileSync } from "fs";
import { join, resolve } from "path";
import { CrmHostStack } from "../../main";
import { DEPLOY_POLICY_FILE } from "../../scripts/docs";
import { loadStackSettings, parseStackSettings } from "../../settings/stack-settings";
import { findMotoServer, MotoServer } from "../support/moto-server";
import {
  awsJson,
  droppedTypes,
  findProviderSetup,
  isolatedMotoEnvironment,
  motoEnvironment,
  plannedChanges,
  providerCopy,
  seedAccount,
  stackVariables,
} from "../support/real-provider";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";
import gaps from "./moto-gaps.json";
import { TEARDOWN_MS } from "../support/teardown";

const ROOT = resolve(__dirname, "../..");
const REGION = "us-east-1";
const STEP_MS = 5 * 60_000;
const setup = findProviderSetup();
const moto = findMotoServer();
/**
 * The stacks, each with the changes to its settings file it runs with: the single host's volume deleted by
 * the destroy, and its site under a name of its own, as both stacks run side by side in the zone.
 */
const STACKS: { file: string; changes: Record<string, unknown> }[] = [
  {
    file: join(ROOT, "examples/prod.json"),
    changes: { deleteDataVolumeOnDestroy: true, domain: { hostedZone: "example.com", name: "single.example.com" } },
  },
  { file: join(ROOT, "examples/scale-out.json"), changes: {} },
];
/** moto's name for an action's service where the request's signing name is not IAM's prefix. */
const SIGNING_NAMES: Readonly<Record<string, string>> = { cloudwatch: "monitoring", tag: "tagging" };

interface Outcome {
  readonly stack: string;
  readonly steps: { step: string; code: number; seconds: number; output: string }[];
  denied?: string[];
  left?: string;
  finalSnapshots?: number;
  alarms?: { name: string; metric: string; threshold: number; missing: string; state: string }[];
  alarmChanges?: string[];
  error?: string;
}

/** The generated policy, each action whose service moto names by another signing name also under that name. */
function judgedPolicy(): object {
  const policy = JSON.parse(readFileSync(DEPLOY_POLICY_FILE, "utf8")) as {
    Version: string;
    Statement: { Action: string[] }[];
  };
  return {
    ...policy,
    Statement: policy.Statement.map((statement) => ({
      ...statement,
      Action: statement.Action.flatMap((action) => {
        const [service, name] = action.split(":");
        return SIGNING_NAMES[service] ? [action, `${SIGNING_NAMES[service]}:${name}`] : [action];
      }),
    })),
  };
}

/**
 * The calls a command's output says were refused: the action an AccessDenied message names, or, where the
 * provider could not read moto's answer (UnknownError), the operation that got HTTP 403.
 */
function deniedCalls(output: string): string[] {
  return [
    ...new Set([
      ...[...output.matchAll(/not authorized to perform:? ([a-z0-9-]+:[A-Za-z0-9]+)/g)].map((match) => match[1]),
      ...[...output.matchAll(/operation error ([^:]+): (\w+), https response error StatusCode: 403/g)].map(
        (match) => `${match[1]}: ${match[2]}`,
      ),
    ]),
  ].sort();
}

describeWithEngine(
  "the deploy role's policy under moto's IAM authorization, as an IAM user holding exactly it",
  (engine) => {
    let server: MotoServer;
    let dns: MotoServer;
    let user: Record<string, string>;
    const outcomes: Outcome[] = [];
    let outside = "";
    let route53 = "";
    let seconds = 0;

    async function runStack(file: string, changes: Record<string, unknown>, subnets: string[]): Promise<Outcome> {
      const settings = parseStackSettings({ ...JSON.parse(readFileSync(file, "utf8")), ...changes });
      const outcome: Outcome = { stack: file.slice(ROOT.length + 1), steps: [] };
      const scaleOut = settings.provisioning.topology === "scale-out";
      const workspace = new EngineWorkspace(
        engine,
        providerCopy(
          JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), settings))),
          setup!.version,
          droppedTypes(gaps),
        ),
      );
      const env = { ...user, ...stackVariables(settings, subnets), TF_CLI_CONFIG_FILE: setup!.cliConfig };
      const step = async (name: string, args: string[]): Promise<void> => {
        const start = Date.now();
        const result = await workspace.run([...args, "-input=false", "-no-color"], env, {}, STEP_MS);
        outcome.steps.push({
          step: name,
          code: result.code,
          seconds: Math.round((Date.now() - start) / 100) / 10,
          output: result.stdout + result.stderr,
        });
        if (result.code !== 0) {
          outcome.denied = deniedCalls(result.stdout + result.stderr);
          throw new Error(`${outcome.stack}: ${name} exited ${result.code}`);
        }
      };
      try {
        await step("init", ["init"]);
        await step("apply", ["apply", "-auto-approve"]);
        const volume = scaleOut
          ? ""
          : /\bid\s+=\s+"(vol-[^"]+)"/.exec(
              (await workspace.run(["state", "show", "-no-color", "aws_ebs_volume.crm_data"], env, {}, STEP_MS)).stdout,
            )?.[1];
        if (scaleOut) {
          // The alarms as CloudWatch (moto's) holds them, no host healthy (moto runs no app) and no traffic.
          const alarms = (
            await awsJson(["cloudwatch", "describe-alarms", "--alarm-name-prefix", `${settings.stackName}/`], user)
          ).MetricAlarms as {
            AlarmName: string;
            MetricName: string;
            Threshold: number;
            TreatMissingData: string;
            StateValue: string;
          }[];
          outcome.alarms = alarms.map((a) => ({
            name: a.AlarmName,
            metric: a.MetricName,
            threshold: a.Threshold,
            missing: a.TreatMissingData,
            state: a.StateValue,
          }));
          // The new alarms read back as planned (the memory threshold computed by Terraform, kept by CloudWatch): no
          // change to an alarm (the parameter group they depend on shows moto's listed drift, moto-gaps.json).
          await step("replan-alarms", [
            "plan",
            "-out=alarms.plan",
            "-target=aws_cloudwatch_metric_alarm.crm_database_free_memory",
            "-target=aws_cloudwatch_metric_alarm.crm_load_balancer_healthy_hosts",
          ]);
          const shown = await workspace.run(["show", "-json", "alarms.plan"], env, {}, STEP_MS);
          outcome.alarmChanges = plannedChanges(JSON.parse(shown.stdout)).filter((change) =>
            change.startsWith("aws_cloudwatch_metric_alarm."),
          );
          // docs/scale-out.md, "Destroying"; targeted, as in real-provider.test.ts (moto has no instance refresh: moto-gaps.json).
          await step("unprotect", [
            "apply",
            "-auto-approve",
            "-target=aws_db_instance.crm_database",
            "-var",
            "database_deletion_protection=false",
          ]);
        }
        await step("destroy", ["destroy", "-auto-approve"]);
        outcome.left = (await workspace.run(["state", "list"], env, {}, STEP_MS)).stdout;
        if (!scaleOut) {
          // The data volume's final snapshot, which the provider takes before it deletes the volume.
          outcome.finalSnapshots = (
            (await awsJson(["ec2", "describe-snapshots", "--filters", `Name=volume-id,Values=${volume}`], user))
              .Snapshots as unknown[]
          ).length;
        }
      } catch (error) {
        outcome.error = (error as Error).message;
      } finally {
        workspace.remove();
      }
      return outcome;
    }

    beforeAll(async () => {
      const start = Date.now();
      [server, dns] = await Promise.all([
        MotoServer.start(moto!, 30_000, { MOTO_IAM_LOAD_MANAGED_POLICIES: "true" }),
        MotoServer.start(moto!, 30_000),
      ]);
      const base = { ...motoEnvironment(server.endpoint, REGION), AWS_ENDPOINT_URL_ROUTE_53: dns.endpoint };
      // Unjudged, as the account's administrator: the account seeded, the deploy user and its key made.
      const subnets = await seedAccount(
        STACKS.map(({ file }) => ({ file, settings: loadStackSettings(file) })),
        base,
      );
      await awsJson(["iam", "create-user", "--user-name", "crm-deploy"], base);
      await awsJson(
        [
          "iam",
          "put-user-policy",
          "--user-name",
          "crm-deploy",
          "--policy-name",
          "crm-deploy",
          "--policy-document",
          JSON.stringify(judgedPolicy()),
        ],
        base,
      );
      const key = (await awsJson(["iam", "create-access-key", "--user-name", "crm-deploy"], base)).AccessKey as {
        AccessKeyId: string;
        SecretAccessKey: string;
      };
      user = {
        ...(isolatedMotoEnvironment(server.endpoint, REGION) as Record<string, string>),
        AWS_ENDPOINT_URL_ROUTE_53: dns.endpoint,
        AWS_ACCESS_KEY_ID: key.AccessKeyId,
        AWS_SECRET_ACCESS_KEY: key.SecretAccessKey,
      };
      // From here on every request is judged (moto's INITIAL_NO_AUTH_ACTION_COUNT, set to 0 now that the seeding's requests are made).
      const reset = await server.http("POST", "/moto-api/reset-auth", "0");
      if (reset.status !== 200) throw new Error(`moto's reset-auth answered ${reset.status}: ${reset.body}`);
      outside = await awsJson(["iam", "list-users"], user).then(
        () => "allowed",
        (error: Error) => error.message,
      );
      // awsJson names moto's judged endpoint itself (--endpoint-url), not Route 53's own; --debug: the CLI shows no message of moto's answer, its log has the body.
      route53 = await awsJson(["route53", "list-hosted-zones", "--debug"], user).then(
        () => "allowed",
        (error: Error) => error.message,
      );

      outcomes.push(...(await Promise.all(STACKS.map(({ file, changes }) => runStack(file, changes, subnets)))));
      seconds = Math.round((Date.now() - start) / 1000);
      console.log(
        `deploy-policy-judge: hashicorp/aws ${setup!.version ?? "(registry)"} against moto, ${seconds} s in all\n${outcomes
          .map(
            (o) =>
              `  ${o.stack}: ${o.steps.map((s) => `${s.step} ${s.seconds} s`).join(", ")}${o.error ? ` FAILED: ${o.error}; denied: ${o.denied?.join(", ")}` : ""}`,
          )
          .join("\n")}`,
      );
    }, 15 * 60_000);

    afterAll(async () => {
      await Promise.all([server?.stop(), dns?.stop()]);
    }, TEARDOWN_MS);

    it("judges the user: a call outside the policy (iam:ListUsers) is refused", () => {
      expect(outside).toMatch(/AccessDenied.*not authorized to perform: iam:ListUsers/s);
    });

    it("cannot judge Route 53 (moto refuses its signed GETs as mis-signed), which is why Route 53 is a server of its own here", () => {
      expect(route53).toMatch(/SignatureDoesNotMatch/);
    });

    it("examples/scale-out.json: has its healthy-host and freeable-memory alarms as planned, the memory threshold a tenth of db.t4g.micro's 1 GiB; moto evaluates no alarm", () => {
      const outcome = outcomes.find((o) => o.stack === "examples/scale-out.json")!;
      expect(outcome.alarmChanges).toEqual([]);
      const alarms = outcome.alarms!;
      const of = (metric: string) => alarms.find((a) => a.metric === metric);
      expect(of("HealthyHostCount")).toMatchObject({ threshold: 1, missing: "breaching" });
      expect(of("FreeableMemory")).toMatchObject({
        threshold: Math.floor((1024 * 1024 * 1024) / 10),
        missing: "missing",
      });
      // moto makes every alarm OK and never evaluates one (only SetAlarmState changes it): that the healthy-host
      // alarm goes to ALARM with no data is CloudWatch's rule for "breaching", on paper here, not measured.
      expect([...new Set(alarms.map((a) => a.state))]).toEqual(["OK"]);
    });

    it.each(STACKS.map(({ file }) => file.slice(ROOT.length + 1)))(
      "%s: applied and destroyed as the user, with no call denied",
      (stack) => {
        const outcome = outcomes.find((o) => o.stack === stack)!;
        const failed = outcome.steps.find((s) => s.code !== 0);
        expect({ error: outcome.error, denied: outcome.denied, output: failed?.output.slice(-3000) }).toEqual({
          error: undefined,
          denied: undefined,
          output: undefined,
        });
        expect(outcome.left).toBe("");
        // The single host's data volume went with the destroy, after its final snapshot (ec2:CreateSnapshot).
        if (!stack.includes("scale-out")) expect(outcome.finalSnapshots).toBe(1);
      },
    );
  },
  [
    ...(setup ? [] : ["the project's Terraform CLI configuration ($TF_CLI_CONFIG_FILE)"]),
    ...(moto ? [] : ["moto_server"]),
  ],
);
