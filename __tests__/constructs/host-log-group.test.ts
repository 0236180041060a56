import { HostLogGroup } from "../../constructs/host-log-group";
import { hostLogGroupName } from "../../settings/host-metrics";
import { synthesize } from "../support/synth";

describe("HostLogGroup", () => {
  const { json } = synthesize((scope) => new HostLogGroup(scope, "logs", { logGroupName: hostLogGroupName("Stack", "Web"), nameTag: "Stack/Web" }));

  it("makes the hosts' log group, named by the stack and instance, kept log_retention_days", () => {
    expect(json.resource?.aws_cloudwatch_log_group).toEqual({
      crm_host: { name: "/crm/Stack/Web", retention_in_days: "${var.log_retention_days}", tags: { Name: "Stack/Web/logs" } },
    });
  });

  it("keeps the logs a year by default, and takes only the periods CloudWatch Logs takes", () => {
    expect(json.variable?.log_retention_days).toMatchObject({ type: "number", nullable: false, default: 365 });
    expect(json.variable?.log_retention_days.validation).toEqual([{
      condition: expect.stringContaining("contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)"),
      error_message: expect.stringMatching(/^Invalid value for variable "log_retention_days": expected one of 1, 3, .* days \(the retention periods CloudWatch Logs takes\)\.$/),
    }]);
    expect(() => synthesize((scope) => new HostLogGroup(scope, "logs", { logGroupName: "/x", nameTag: "S/W", defaultRetentionDays: 31 })))
      .toThrow(/defaultRetentionDays must be one of 1, 3, 5/);
  });

  it("refuses a name CloudWatch Logs would refuse", () => {
    expect(() => synthesize((scope) => new HostLogGroup(scope, "logs", { logGroupName: "/crm/a b", nameTag: "S/W" })))
      .toThrow(/CloudWatch Logs log group name "\/crm\/a b"/);
  });
});
