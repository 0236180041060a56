import { AlarmTopic } from "../../constructs/alarm-topic";
import { only, synthesize } from "../support/synth";

describe("AlarmTopic", () => {
  const { json } = synthesize(
    (scope) => new AlarmTopic(scope, "topic", { email: "ops@example.com", nameTag: "Stack/Web" }),
  );

  it("makes the topic under a key of the account's own, with the e-mail subscription, at the addresses HostAlarms had", () => {
    expect(json.resource?.aws_sns_topic).toEqual({
      crm_host_alarms: { name: "Stack-Web-alarms", kms_master_key_id: "${aws_kms_key.crm_host_alarms.arn}" },
    });
    expect(json.resource?.aws_sns_topic_subscription?.crm_host_alarms).toEqual({
      topic_arn: "${aws_sns_topic.crm_host_alarms.arn}",
      protocol: "email",
      endpoint: "ops@example.com",
    });
    const policy = JSON.parse(only(json.resource, "aws_kms_key").policy);
    // AWS's documented statement (SNS Developer Guide, sns-key-management.html#compatibility-with-aws-services), no condition.
    expect(policy.Statement[1]).toEqual({
      Sid: "CloudWatchPublishesAlarms",
      Effect: "Allow",
      Principal: { Service: "cloudwatch.amazonaws.com" },
      Action: ["kms:GenerateDataKey*", "kms:Decrypt"],
      Resource: "*",
    });
  });

  it("reads the partition itself unless given it", () => {
    expect(Object.keys(json.data?.aws_partition ?? {})).toEqual(["crm_host_alarms"]);
    const given = synthesize(
      (scope) => new AlarmTopic(scope, "topic", { email: "ops@example.com", nameTag: "S/W", partition: "aws" }),
    ).json;
    expect(given.data?.aws_partition).toBeUndefined();
    expect(JSON.parse(only(given.resource, "aws_kms_key").policy).Statement[0].Principal.AWS).toBe(
      "arn:aws:iam::${data.aws_caller_identity.crm_host_alarms.account_id}:root",
    );
  });
});
