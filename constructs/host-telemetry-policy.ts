import { DataAwsIamPolicyDocument } from "@cdktf/provider-aws/lib/data-aws-iam-policy-document";
import { IamRolePolicy } from "@cdktf/provider-aws/lib/iam-role-policy";
import { Construct } from "constructs";
import { HOST_METRIC_NAMESPACE } from "../settings/host-metrics";
import { nameElements } from "./addresses";

/** Props of {@link HostTelemetryPolicy}. */
export interface HostTelemetryPolicyProps {
  /** Name of the role that gets the policy (the instance role). */
  readonly roleName: string;
  /** ARN of the hosts' log group (`aws_cloudwatch_log_group.arn`, without a `:*`). */
  readonly logGroupArn: string;
  /**
   * The one namespace the role may put metrics in.
   * @default HOST_METRIC_NAMESPACE ("CRM/Host")
   */
  readonly namespace?: string;
  /**
   * Terraform name of the policy document and the role policy (`<type>.<name>`).
   * @default "crm_host_telemetry"
   */
  readonly name?: string;
}

/**
 * What the hosts need to report on themselves, and no more: `cloudwatch:PutMetricData` only into the
 * hosts' namespace (PutMetricData has no resource; the `cloudwatch:namespace` condition key is how IAM
 * narrows it), and writing to their own log group's streams only (CreateLogStream and PutLogEvents on that
 * group; no CreateLogGroup: the stack makes the group; no reading: the shipper keeps its own positions).
 */
export class HostTelemetryPolicy extends Construct {
  public readonly document: DataAwsIamPolicyDocument;
  public readonly policy: IamRolePolicy;

  constructor(scope: Construct, id: string, props: HostTelemetryPolicyProps) {
    super(scope, id);
    const name = props.name ?? "crm_host_telemetry";
    this.document = new DataAwsIamPolicyDocument(this, "document", {
      statement: [
        {
          sid: "PutHostMetrics",
          effect: "Allow",
          actions: ["cloudwatch:PutMetricData"],
          resources: ["*"],
          condition: [
            {
              test: "StringEquals",
              variable: "cloudwatch:namespace",
              values: [props.namespace ?? HOST_METRIC_NAMESPACE],
            },
          ],
        },
        {
          sid: "WriteOwnLogGroup",
          effect: "Allow",
          actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
          // The group, and its streams (log-group:<name>:log-stream:<stream>).
          resources: [props.logGroupArn, `${props.logGroupArn}:log-stream:*`],
        },
      ],
    });
    nameElements(name, this.document);
    this.policy = new IamRolePolicy(this, "policy", {
      name: "report-crm-host",
      role: props.roleName,
      policy: this.document.json,
    });
    nameElements(name, this.policy);
  }
}
