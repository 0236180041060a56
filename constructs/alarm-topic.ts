import { DataAwsCallerIdentity } from "@cdktf/provider-aws/lib/data-aws-caller-identity";
import { DataAwsPartition } from "@cdktf/provider-aws/lib/data-aws-partition";
import { KmsKey } from "@cdktf/provider-aws/lib/kms-key";
import { SnsTopic } from "@cdktf/provider-aws/lib/sns-topic";
import { SnsTopicSubscription } from "@cdktf/provider-aws/lib/sns-topic-subscription";
import { TerraformProvider } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";
import { POLICY_VERSION } from "./constants";

/**
 * The key policy statement that lets CloudWatch publish alarms to a topic encrypted with the key, in AWS's
 * documented form: "Enable compatibility between event sources from AWS services and encrypted topics",
 * Amazon SNS Developer Guide, https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
 * (the service principal, `kms:GenerateDataKey*` and `kms:Decrypt`, `"Resource": "*"`, no condition; the same
 * statement in the AWS Knowledge Center's https://repost.aws/knowledge-center/cloudwatch-configure-alarm-sns).
 * No condition: AWS documents none for this statement, and one that the request from CloudWatch does not
 * carry (an earlier `aws:SourceAccount` here) would deny it, and every notification would be dropped
 * silently. Who may publish is the topic's policy's to say (SNS's default one: this account's sources only);
 * the key encrypts this topic and nothing else.
 */
export const CLOUDWATCH_TOPIC_KEY_STATEMENT = {
  Effect: "Allow",
  Principal: { Service: "cloudwatch.amazonaws.com" },
  Action: ["kms:GenerateDataKey*", "kms:Decrypt"],
  Resource: "*",
} as const;

/** Props of {@link AlarmTopic}. */
export interface AlarmTopicProps {
  /** E-mail address subscribed to the topic. */
  readonly email: string;
  /** `<stack_name>/<instance_name>`: the topic's name is made from it. */
  readonly nameTag: string;
  /**
   * The AWS partition (`aws`, `aws-cn`, …), for the key policy's ARN.
   * @default - read by a data source of its own (`data.aws_partition.<name>`)
   */
  readonly partition?: string;
  /**
   * Terraform name of the topic, its key, the subscription and the account's data source (`<type>.<name>`).
   * @default "crm_host_alarms"
   */
  readonly name?: string;
  /**
   * The AWS provider whose region holds the topic: a topic must be in the region of the alarms that tell it.
   * @default - the stack's default provider (its region)
   */
  readonly provider?: TerraformProvider;
}

/**
 * The SNS topic every alarm of the stack tells, with the e-mail subscription (AWS mails a confirmation link
 * first; until it is followed, nothing is delivered), encrypted by a key of the account's own, as CloudWatch
 * cannot publish to a topic under the AWS managed key (whose policy cannot grant it). The account
 * administers the key; CloudWatch may use it to publish ({@link CLOUDWATCH_TOPIC_KEY_STATEMENT}). $1 a month for
 * the key, rotated yearly; e-mail notifications are within SNS's free 1,000 a month.
 */
export class AlarmTopic extends Construct {
  public readonly topic: SnsTopic;
  public readonly key: KmsKey;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    const name = props.name ?? "crm_host_alarms";
    const provider = props.provider;
    let partition = props.partition;
    if (partition === undefined) {
      const source = new DataAwsPartition(this, "partition", { provider });
      nameElements(name, source);
      partition = source.partition;
    }
    const account = new DataAwsCallerIdentity(this, "account", { provider });
    nameElements(name, account);
    this.key = new KmsKey(this, "key", {
      provider,
      description: "Encrypts the alarm notifications of the CRM host (SNS)",
      enableKeyRotation: true,
      deletionWindowInDays: 7,
      policy: JSON.stringify({
        Version: POLICY_VERSION,
        Statement: [
          {
            Sid: "AccountAdministers",
            Effect: "Allow",
            Principal: { AWS: `arn:${partition}:iam::${account.accountId}:root` },
            Action: "kms:*",
            Resource: "*",
          },
          { Sid: "CloudWatchPublishesAlarms", ...CLOUDWATCH_TOPIC_KEY_STATEMENT },
        ],
      }),
    });
    nameElements(name, this.key);
    this.topic = new SnsTopic(this, "topic", {
      provider,
      name: awsName("snsTopicName", `${props.nameTag.replace(/[^A-Za-z0-9_-]/g, "-")}-alarms`),
      kmsMasterKeyId: this.key.arn,
    });
    nameElements(name, this.topic);
    const subscription = new SnsTopicSubscription(this, "email", {
      provider,
      topicArn: this.topic.arn,
      protocol: "email",
      endpoint: props.email,
    });
    nameElements(name, subscription);
  }

  /** The topic's ARN, for alarm and OK actions. */
  public get arn(): string {
    return this.topic.arn;
  }
}
