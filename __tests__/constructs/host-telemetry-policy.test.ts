import { HostTelemetryPolicy } from "../../constructs/host-telemetry-policy";
import { synthesize } from "../support/synth";

describe("HostTelemetryPolicy", () => {
  const { json } = synthesize(
    (scope) =>
      new HostTelemetryPolicy(scope, "telemetry", {
        roleName: "${aws_iam_role.r.name}",
        logGroupArn: "${aws_cloudwatch_log_group.g.arn}",
      }),
  );

  const statements = () => json.data!.aws_iam_policy_document.crm_host_telemetry.statement as Record<string, unknown>[];

  it("lets the role put metrics into CRM/Host only, by the cloudwatch:namespace condition", () => {
    const [metrics] = statements();
    expect(metrics).toEqual({
      sid: "PutHostMetrics",
      effect: "Allow",
      actions: ["cloudwatch:PutMetricData"],
      resources: ["*"],
      condition: [{ test: "StringEquals", variable: "cloudwatch:namespace", values: ["CRM/Host"] }],
    });
  });

  it("lets the role write to its own log group's streams only, and create no log group", () => {
    const [, logs] = statements();
    expect(logs).toEqual({
      sid: "WriteOwnLogGroup",
      effect: "Allow",
      actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
      resources: ["${aws_cloudwatch_log_group.g.arn}", "${aws_cloudwatch_log_group.g.arn}:log-stream:*"],
    });
    expect(statements()).toHaveLength(2);
  });

  it("attaches it to the role as an inline policy at a readable address", () => {
    expect(json.resource?.aws_iam_role_policy).toEqual({
      crm_host_telemetry: {
        name: "report-crm-host",
        role: "${aws_iam_role.r.name}",
        policy: "${data.aws_iam_policy_document.crm_host_telemetry.json}",
      },
    });
  });
});
