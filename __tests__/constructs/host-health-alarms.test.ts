import { HostHealthAlarms } from "../../constructs/host-health-alarms";
import { HOST_METRIC_NAMESPACE, HOST_METRICS } from "../../settings/host-metrics";
import { synthesize } from "../support/synth";

describe("HostHealthAlarms", () => {
  const build = (props: Partial<ConstructorParameters<typeof HostHealthAlarms>[2]> = {}) =>
    synthesize(
      (scope) =>
        new HostHealthAlarms(scope, "health", { instanceId: "${aws_instance.web.id}", nameTag: "Stack/Web", ...props }),
    ).json;
  const alarms = build().resource!.aws_cloudwatch_metric_alarm;

  it("watches the app's health per instance in the CRM/Host namespace, a missing report counting as unhealthy, for 3 minutes", () => {
    expect(Object.keys(alarms).sort()).toEqual([
      "crm_host_app_health",
      "crm_host_data_disk",
      "crm_host_memory",
      "crm_host_root_disk",
    ]);
    expect(alarms.crm_host_app_health).toEqual({
      alarm_name: "Stack/Web AppHealthy",
      alarm_description:
        "Stack/Web's app has not answered its health check (or the host has not reported) for 3 minutes",
      namespace: HOST_METRIC_NAMESPACE,
      metric_name: HOST_METRICS.appHealthy,
      dimensions: { InstanceId: "${aws_instance.web.id}" },
      statistic: "Minimum",
      period: 60,
      evaluation_periods: 3,
      threshold: 1,
      comparison_operator: "LessThanThreshold",
      treat_missing_data: "breaching",
    });
    expect(HOST_METRIC_NAMESPACE).toBe("CRM/Host");
  });

  it("watches the root and data file systems by the Volume dimension, and memory, at 90% for 5 minutes; silence is no alarm there", () => {
    expect(alarms.crm_host_root_disk).toMatchObject({
      metric_name: "DiskUsedPercent",
      dimensions: { InstanceId: "${aws_instance.web.id}", Volume: "root" },
      threshold: 90,
      comparison_operator: "GreaterThanOrEqualToThreshold",
      evaluation_periods: 5,
      treat_missing_data: "missing",
    });
    expect(alarms.crm_host_data_disk.dimensions).toEqual({ InstanceId: "${aws_instance.web.id}", Volume: "data" });
    expect(alarms.crm_host_memory).toMatchObject({
      metric_name: "MemoryUsedPercent",
      dimensions: { InstanceId: "${aws_instance.web.id}" },
      threshold: 90,
      treat_missing_data: "missing",
    });
  });

  it("tells the topic when given one, on alarm and on recovery; takes other thresholds; leaves out the data disk without a data volume", () => {
    for (const alarm of Object.values(alarms))
      expect([alarm.alarm_actions, alarm.ok_actions]).toEqual([undefined, undefined]);
    const told = build({ topicArn: "${aws_sns_topic.t.arn}", dataVolume: false, thresholds: { diskUsedPercent: 80 } })
      .resource!.aws_cloudwatch_metric_alarm;
    expect(Object.keys(told).sort()).toEqual(["crm_host_app_health", "crm_host_memory", "crm_host_root_disk"]);
    for (const alarm of Object.values(told))
      expect([alarm.alarm_actions, alarm.ok_actions]).toEqual([["${aws_sns_topic.t.arn}"], ["${aws_sns_topic.t.arn}"]]);
    expect(told.crm_host_root_disk.threshold).toBe(80);
  });
});
