import { DatabaseAlarms } from "../../constructs/database-alarms";
import { synthesize } from "../support/synth";

describe("DatabaseAlarms", () => {
  const build = (topicArn?: string) =>
    synthesize(
      (scope) =>
        new DatabaseAlarms(scope, "alarms", {
          dbInstanceIdentifier: "${aws_db_instance.db.identifier}",
          instanceClass: "db.t4g.micro",
          nameTag: "S/W",
          topicArn,
        }),
    ).json;
  const synthesized = build();
  const alarms = synthesized.resource!.aws_cloudwatch_metric_alarm;

  it("fires under 2 GiB of free storage, over 80% CPU for 15 minutes, and at 60 connections for 5", () => {
    const dimensions = { DBInstanceIdentifier: "${aws_db_instance.db.identifier}" };
    expect(alarms.crm_database_free_storage).toMatchObject({
      namespace: "AWS/RDS",
      metric_name: "FreeStorageSpace",
      dimensions,
      threshold: 2 * 1024 ** 3,
      comparison_operator: "LessThanThreshold",
    });
    expect(alarms.crm_database_cpu).toMatchObject({
      metric_name: "CPUUtilization",
      dimensions,
      period: 300,
      evaluation_periods: 3,
      threshold: 80,
    });
    expect(alarms.crm_database_connections).toMatchObject({
      metric_name: "DatabaseConnections",
      dimensions,
      evaluation_periods: 5,
      threshold: 60,
    });
  });

  it("fires when under a tenth of the class's memory (EC2's instance type of its name) has been freeable for 15 minutes", () => {
    expect(synthesized.data!.aws_ec2_instance_type.crm_database_class).toEqual({
      instance_type: '${trimprefix("db.t4g.micro", "db.")}',
    });
    expect(alarms.crm_database_free_memory).toMatchObject({
      alarm_name: "S/W database FreeableMemory",
      namespace: "AWS/RDS",
      metric_name: "FreeableMemory",
      dimensions: { DBInstanceIdentifier: "${aws_db_instance.db.identifier}" },
      statistic: "Average",
      period: 300,
      evaluation_periods: 3,
      comparison_operator: "LessThanThreshold",
      treat_missing_data: "missing",
      // memory_size is in MiB: a tenth of it, in whole bytes (CloudWatch's unit for FreeableMemory).
      threshold: "${floor((data.aws_ec2_instance_type.crm_database_class.memory_size * 104857.6))}",
    });
  });

  it("tells the topic when given one", () => {
    for (const alarm of Object.values(alarms)) expect(alarm.alarm_actions).toBeUndefined();
    for (const alarm of Object.values(build("arn:t").resource!.aws_cloudwatch_metric_alarm))
      expect([alarm.alarm_actions, alarm.ok_actions]).toEqual([["arn:t"], ["arn:t"]]);
  });
});
