/**
 * The outside check of a stack outside us-east-1 (FrontHealthCheck with region eu-west-1 and an e-mail), through
 * the real AWS provider against moto: the health check is made, and the alarm, its topic, key and subscription
 * land in us-east-1 (the second provider's region, where Route 53's metrics are), none in the stack's region; a
 * second plan changes nothing; the destroy leaves nothing. The example stacks are all in us-east-1, where the
 * alarm tells the stack's own topic: __tests__/engine/real-provider.test.ts runs those.
 */
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { App, TerraformStack, Testing } from "cdktf";
import { FrontHealthCheck } from "../../constructs/front-health-check";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { awsJson, findProviderSetup, motoEnvironment, providerCopy } from "../support/real-provider";
import { TEARDOWN_MS } from "../support/teardown";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";

const REGION = "eu-west-1";
const STEP_MS = 3 * 60_000;
const setup = findProviderSetup();
const moto = findMotoServer();

/** The stack: the default provider in eu-west-1, and the check of an Elastic IP's address there. */
function frontCheckStack(): object {
  const stack = new TerraformStack(Testing.app() as App, "front-check");
  new AwsProvider(stack, "aws", { region: REGION });
  new FrontHealthCheck(stack, "front_check", {
    address: { ipAddress: "203.0.113.10" },
    path: "/health",
    nameTag: "Front/Check",
    region: REGION,
    email: "ops@example.com",
  });
  return JSON.parse(Testing.synth(stack));
}

describeWithEngine(
  "the outside check of a stack in eu-west-1, through the real AWS provider against moto",
  (engine) => {
    let server: MotoServer;
    let workspace: EngineWorkspace;
    let env: Record<string, string>;
    const steps: Record<string, { code: number; output: string }> = {};
    let check: Record<string, unknown> = {};
    const alarms: Record<string, any[]> = {};
    const topics: Record<string, string[]> = {};
    let subscriptions: any[] = [];
    let left = "";

    beforeAll(async () => {
      server = await MotoServer.start(moto!, 30_000);
      env = { ...motoEnvironment(server.endpoint, REGION), TF_CLI_CONFIG_FILE: setup!.cliConfig };
      workspace = new EngineWorkspace(engine, providerCopy(frontCheckStack() as never, setup!.version));
      const step = async (name: string, args: string[]) => {
        const result = await workspace.run([...args, "-input=false", "-no-color"], env, {}, STEP_MS);
        steps[name] = { code: result.code, output: result.stdout + result.stderr };
        return result;
      };
      try {
        await step("init", ["init"]);
        if ((await step("apply", ["apply", "-auto-approve"])).code !== 0) return;
        const state = JSON.parse((await workspace.run(["show", "-json"], env, {}, STEP_MS)).stdout);
        const resources = state.values.root_module.resources as { address: string; values: Record<string, unknown> }[];
        check = resources.find((resource) => resource.address === "aws_route53_health_check.crm_front")!.values;
        for (const region of ["us-east-1", REGION]) {
          alarms[region] = (await awsJson(["cloudwatch", "describe-alarms", "--region", region], env)).MetricAlarms;
          topics[region] = (await awsJson(["sns", "list-topics", "--region", region], env)).Topics.map(
            (topic: { TopicArn: string }) => topic.TopicArn,
          );
        }
        subscriptions = (await awsJson(["sns", "list-subscriptions", "--region", "us-east-1"], env)).Subscriptions;
        await step("replan", ["plan", "-detailed-exitcode"]);
        await step("destroy", ["destroy", "-auto-approve"]);
        left = (await workspace.run(["state", "list"], env, {}, STEP_MS)).stdout;
      } finally {
        workspace.remove();
      }
    }, 4 * STEP_MS);

    afterAll(async () => {
      await server?.stop();
    }, TEARDOWN_MS);

    it("applies: the health check asks the address's port 80 over HTTP at the path", () => {
      expect({ code: steps.apply?.code, output: steps.apply?.code === 0 ? "" : steps.apply?.output }).toEqual({
        code: 0,
        output: "",
      });
      expect(check).toMatchObject({ ip_address: "203.0.113.10", type: "HTTP", port: 80, resource_path: "/health" });
    });

    it("puts the alarm, its topic and the e-mail subscription in us-east-1, none in the stack's region", () => {
      expect(alarms[REGION]).toEqual([]);
      expect(topics[REGION]).toEqual([]);
      expect(topics["us-east-1"]).toEqual([
        expect.stringMatching(/^arn:aws:sns:us-east-1:\d+:Front-Check-front-alarms$/),
      ]);
      expect(alarms["us-east-1"]).toEqual([
        expect.objectContaining({
          AlarmName: "Front/Check HealthCheckStatus front",
          Namespace: "AWS/Route53",
          MetricName: "HealthCheckStatus",
          Dimensions: [{ Name: "HealthCheckId", Value: check.id }],
          Threshold: 1,
          ComparisonOperator: "LessThanThreshold",
          AlarmActions: topics["us-east-1"],
          OKActions: topics["us-east-1"],
        }),
      ]);
      expect(subscriptions).toEqual([
        expect.objectContaining({ TopicArn: topics["us-east-1"][0], Protocol: "email", Endpoint: "ops@example.com" }),
      ]);
    });

    it("plans nothing more, and the destroy leaves nothing", () => {
      expect({ code: steps.replan?.code, output: steps.replan?.code === 0 ? "" : steps.replan?.output }).toEqual({
        code: 0,
        output: "",
      });
      expect(steps.destroy?.code).toBe(0);
      expect(left).toBe("");
    });
  },
  [
    ...(setup ? [] : ["the project's Terraform CLI configuration ($TF_CLI_CONFIG_FILE)"]),
    ...(moto ? [] : ["moto_server"]),
  ],
);
