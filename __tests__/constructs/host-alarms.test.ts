import { HostAlarms, STATUS_CHECK_ALARMS } from "../../constructs/host-alarms";
import { synthesize } from "../support/synth";

describe("HostAlarms", () => {
  const build = (email?: string) =>
    synthesize(
      (scope) =>
        new HostAlarms(scope, "alarms", {
          instanceId: "${aws_instance.web.id}",
          region: "eu-west-1",
          nameTag: "Stack/Web",
          email,
        }),
    ).json;

  it("recovers the instance after 2 minutes of failed system checks and reboots it after 3 of failed instance checks", () => {
    const alarms = build().resource?.aws_cloudwatch_metric_alarm ?? {};
    expect(Object.keys(alarms).sort()).toEqual(["crm_host_instance_check", "crm_host_system_check"]);
    const common = {
      namespace: "AWS/EC2",
      dimensions: { InstanceId: "${aws_instance.web.id}" },
      statistic: "Maximum",
      period: 60,
      threshold: 1,
      comparison_operator: "GreaterThanOrEqualToThreshold",
    };
    expect(alarms.crm_host_system_check).toEqual({
      ...common,
      metric_name: "StatusCheckFailed_System",
      evaluation_periods: 2,
      alarm_name: "Stack/Web StatusCheckFailed_System",
      alarm_description: "Recovers Stack/Web when its system status check fails 2 minutes in a row",
      alarm_actions: ["arn:${data.aws_partition.crm_host_alarms.partition}:automate:eu-west-1:ec2:recover"],
    });
    expect(alarms.crm_host_instance_check).toMatchObject({
      ...common,
      metric_name: "StatusCheckFailed_Instance",
      evaluation_periods: 3,
      alarm_actions: ["arn:${data.aws_partition.crm_host_alarms.partition}:automate:eu-west-1:ec2:reboot"],
    });
    // EC2 refuses a recover action on the instance check: only the system check may move the instance.
    expect(STATUS_CHECK_ALARMS.filter((alarm) => alarm.action === "recover").map((alarm) => alarm.metric)).toEqual([
      "StatusCheckFailed_System",
    ]);
  });

  it("creates no topic without an e-mail address: the alarms still act", () => {
    const json = build();
    expect(json.resource?.aws_sns_topic).toBeUndefined();
    expect(json.resource?.aws_kms_key).toBeUndefined();
    expect(json.resource?.aws_sns_topic_subscription).toBeUndefined();
    expect(json.resource?.aws_cloudwatch_metric_alarm.crm_host_system_check.ok_actions).toBeUndefined();
  });

  it("tells the e-mail address through an SNS topic when an alarm fires and when it clears", () => {
    const json = build("ops@example.com");
    expect(json.resource?.aws_sns_topic).toEqual({
      crm_host_alarms: { name: "Stack-Web-alarms", kms_master_key_id: "${aws_kms_key.crm_host_alarms.arn}" },
    });
    expect(json.resource?.aws_sns_topic_subscription).toEqual({
      crm_host_alarms: {
        topic_arn: "${aws_sns_topic.crm_host_alarms.arn}",
        protocol: "email",
        endpoint: "ops@example.com",
      },
    });
    // Encrypted with a key of the account's own: CloudWatch cannot publish under the AWS managed key.
    const key = json.resource?.aws_kms_key.crm_host_alarms;
    expect(key).toMatchObject({ enable_key_rotation: true, deletion_window_in_days: 7 });
    const statements = JSON.parse(key?.policy as string).Statement;
    expect(statements).toEqual([
      expect.objectContaining({
        Principal: {
          AWS: "arn:${data.aws_partition.crm_host_alarms.partition}:iam::${data.aws_caller_identity.crm_host_alarms.account_id}:root",
        },
        Action: "kms:*",
      }),
      // AWS's documented statement for an AWS service publishing to an encrypted topic (SNS Developer Guide,
      // sns-key-management.html#compatibility-with-aws-services), to the letter: no condition.
      {
        Sid: "CloudWatchPublishesAlarms",
        Effect: "Allow",
        Principal: { Service: "cloudwatch.amazonaws.com" },
        Action: ["kms:GenerateDataKey*", "kms:Decrypt"],
        Resource: "*",
      },
    ]);
    for (const alarm of Object.values(json.resource?.aws_cloudwatch_metric_alarm ?? {})) {
      expect(alarm.alarm_actions).toContain("${aws_sns_topic.crm_host_alarms.arn}");
      expect(alarm.ok_actions).toEqual(["${aws_sns_topic.crm_host_alarms.arn}"]);
    }
  });
});
