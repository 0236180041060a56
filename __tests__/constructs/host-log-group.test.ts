import { DeploymentVariables } from "../../constructs/deployment-variables";
import { HostLogGroup } from "../../constructs/host-log-group";
import { hostLogGroupName } from "../../settings/host-metrics";
import { synthesize } from "../support/synth";

describe("HostLogGroup", () => {
  // As both topologies build it: kept DeploymentVariables' log_retention_days.
  const { json } = synthesize((scope) => {
    const inputs = new DeploymentVariables(scope, "inputs");
    new HostLogGroup(scope, "logs", {
      logGroupName: hostLogGroupName("Stack", "Web"),
      nameTag: "Stack/Web",
      retentionDays: inputs.logRetentionDays.numberValue,
    });
  });

  it("makes the hosts' log group, named by the stack and instance, kept log_retention_days", () => {
    expect(json.resource?.aws_cloudwatch_log_group).toEqual({
      crm_host: {
        name: "/crm/Stack/Web",
        retention_in_days: "${var.log_retention_days}",
        tags: { Name: "Stack/Web/logs" },
      },
    });
  });

  it("keeps the logs a year unless told otherwise, and takes only the periods CloudWatch Logs takes", () => {
    const kept = (retentionDays?: number) =>
      synthesize((scope) => new HostLogGroup(scope, "logs", { logGroupName: "/x", nameTag: "S/W", retentionDays })).json
        .resource?.aws_cloudwatch_log_group?.crm_host.retention_in_days;
    expect(kept()).toBe(365);
    expect(kept(30)).toBe(30);
    expect(() => kept(31)).toThrow(/HostLogGroup: retentionDays must be one of 1, 3, 5, .*, got 31/);
  });

  it("refuses a name CloudWatch Logs would refuse", () => {
    expect(() =>
      synthesize((scope) => new HostLogGroup(scope, "logs", { logGroupName: "/crm/a b", nameTag: "S/W" })),
    ).toThrow(/CloudWatch Logs log group name "\/crm\/a b"/);
  });
});
