/**
 * The deploy role's IAM policy (docs/github-actions.md, step 5; docs/deploy-role-policy.json), made from
 * the synthesized stacks: each Terraform resource and data source type they hold maps to the actions
 * that Terraform's AWS provider calls to create, read, update and delete it (and the iam:PassRole or
 * service-linked role its service needs), one statement per AWS service; the S3 backend's bucket (and its
 * KMS key) get the state's actions. A type missing from the map is an error, so a stack that gains one
 * fails `npm run docs` and the test (__tests__/docs/deploy-policy.test.ts) until the map has it.
 */
import { StackJson } from "./terraform-json";

/** The provider's calls by type; a data source is `data.<type>`. Types that call no AWS API map to []. */
export const TYPE_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  terraform_data: [],
  "data.aws_partition": [],
  "data.aws_iam_policy_document": [],
  "data.aws_caller_identity": ["sts:GetCallerIdentity"],
  "data.aws_ami": ["ec2:DescribeImages"],
  "data.aws_ec2_instance_type": ["ec2:DescribeInstanceTypes"],
  "data.aws_subnet": ["ec2:DescribeSubnets"],
  "data.aws_vpc": ["ec2:DescribeVpcs", "ec2:DescribeVpcAttribute"],
  "data.aws_ssm_parameter": ["ssm:GetParameter"],
  "data.aws_ssm_parameters_by_path": ["ssm:GetParametersByPath"],
  "data.aws_kms_key": ["kms:DescribeKey"],
  "data.aws_route53_zone": [
    "route53:ListHostedZones",
    "route53:ListHostedZonesByName",
    "route53:GetHostedZone",
    "route53:ListTagsForResource",
  ],
  "data.aws_resourcegroupstaggingapi_resources": ["tag:GetResources"],
  aws_instance: [
    "ec2:RunInstances",
    "ec2:DescribeInstances",
    "ec2:DescribeInstanceAttribute",
    "ec2:ModifyInstanceAttribute",
    "ec2:DescribeInstanceStatus",
    "ec2:StopInstances",
    "ec2:StartInstances",
    "ec2:TerminateInstances",
    "ec2:DescribeInstanceCreditSpecifications",
    "ec2:ModifyInstanceCreditSpecification",
    "ec2:ModifyInstanceMetadataOptions",
    "ec2:ModifyInstanceMaintenanceOptions",
    "ec2:MonitorInstances",
    "ec2:UnmonitorInstances",
    "ec2:DescribeVolumes",
    "ec2:ModifyVolume",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeAccountAttributes",
    "ec2:DescribeTags",
    "ec2:CreateTags",
    "ec2:DeleteTags",
    "ec2:AssociateIamInstanceProfile",
    "ec2:DisassociateIamInstanceProfile",
    "ec2:ReplaceIamInstanceProfileAssociation",
    "ec2:DescribeIamInstanceProfileAssociations",
    "iam:PassRole",
  ],
  aws_security_group: [
    "ec2:CreateSecurityGroup",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSecurityGroupRules",
    "ec2:DeleteSecurityGroup",
    "ec2:AuthorizeSecurityGroupIngress",
    "ec2:AuthorizeSecurityGroupEgress",
    "ec2:RevokeSecurityGroupIngress",
    "ec2:RevokeSecurityGroupEgress",
    "ec2:UpdateSecurityGroupRuleDescriptionsIngress",
    "ec2:UpdateSecurityGroupRuleDescriptionsEgress",
    "ec2:DescribeNetworkInterfaces",
    "ec2:CreateTags",
    "ec2:DeleteTags",
  ],
  // The first boot's modules (HostModules): String parameters, read back with their tags.
  aws_ssm_parameter: [
    "ssm:PutParameter",
    "ssm:GetParameter",
    "ssm:GetParameters",
    "ssm:DescribeParameters",
    "ssm:DeleteParameter",
    "ssm:ListTagsForResource",
    "ssm:AddTagsToResource",
    "ssm:RemoveTagsFromResource",
  ],
  aws_key_pair: ["ec2:ImportKeyPair", "ec2:DescribeKeyPairs", "ec2:DeleteKeyPair", "ec2:CreateTags", "ec2:DeleteTags"],
  aws_eip: [
    "ec2:AllocateAddress",
    "ec2:DescribeAddresses",
    "ec2:DescribeAddressesAttribute",
    "ec2:ReleaseAddress",
    "ec2:DisassociateAddress",
    "ec2:CreateTags",
    "ec2:DeleteTags",
  ],
  aws_eip_association: ["ec2:AssociateAddress", "ec2:DisassociateAddress", "ec2:DescribeAddresses"],
  aws_ebs_volume: [
    "ec2:CreateVolume",
    "ec2:DescribeVolumes",
    "ec2:DescribeVolumesModifications",
    "ec2:ModifyVolume",
    "ec2:DeleteVolume",
    "ec2:DescribeSnapshots",
    "ec2:CreateTags",
    "ec2:DeleteTags",
    // final_snapshot: deleting the volume (opted in, or a replacement) snapshots it first.
    "ec2:CreateSnapshot",
  ],
  aws_volume_attachment: [
    "ec2:AttachVolume",
    "ec2:DetachVolume",
    "ec2:DescribeVolumes",
    "ec2:DescribeInstances",
    "ec2:StopInstances",
  ],
  aws_launch_template: [
    "ec2:CreateLaunchTemplate",
    "ec2:CreateLaunchTemplateVersion",
    "ec2:DescribeLaunchTemplates",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:ModifyLaunchTemplate",
    "ec2:DeleteLaunchTemplate",
    "ec2:DeleteLaunchTemplateVersions",
    "ec2:CreateTags",
    "ec2:DeleteTags",
  ],
  aws_iam_role: [
    "iam:CreateRole",
    "iam:GetRole",
    "iam:UpdateRole",
    "iam:UpdateAssumeRolePolicy",
    "iam:DeleteRole",
    "iam:TagRole",
    "iam:UntagRole",
    "iam:ListRolePolicies",
    "iam:ListAttachedRolePolicies",
    "iam:ListInstanceProfilesForRole",
    "iam:DeleteRolePolicy",
    "iam:DetachRolePolicy",
  ],
  aws_iam_role_policy: ["iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy"],
  aws_iam_role_policy_attachment: ["iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:ListAttachedRolePolicies"],
  aws_iam_instance_profile: [
    "iam:CreateInstanceProfile",
    "iam:GetInstanceProfile",
    "iam:DeleteInstanceProfile",
    "iam:AddRoleToInstanceProfile",
    "iam:RemoveRoleFromInstanceProfile",
    "iam:TagInstanceProfile",
    "iam:UntagInstanceProfile",
    "iam:PassRole",
  ],
  aws_cloudwatch_metric_alarm: [
    "cloudwatch:PutMetricAlarm",
    "cloudwatch:DescribeAlarms",
    "cloudwatch:DeleteAlarms",
    "cloudwatch:ListTagsForResource",
    "cloudwatch:TagResource",
    "cloudwatch:UntagResource",
  ],
  aws_cloudwatch_log_group: [
    "logs:CreateLogGroup",
    "logs:DescribeLogGroups",
    "logs:DeleteLogGroup",
    "logs:PutRetentionPolicy",
    "logs:DeleteRetentionPolicy",
    "logs:ListTagsForResource",
    "logs:TagResource",
    "logs:UntagResource",
  ],
  aws_dlm_lifecycle_policy: [
    "dlm:CreateLifecyclePolicy",
    "dlm:GetLifecyclePolicy",
    "dlm:GetLifecyclePolicies",
    "dlm:UpdateLifecyclePolicy",
    "dlm:DeleteLifecyclePolicy",
    "dlm:ListTagsForResource",
    "dlm:TagResource",
    "dlm:UntagResource",
    "iam:PassRole",
  ],
  aws_sns_topic: [
    "sns:CreateTopic",
    "sns:GetTopicAttributes",
    "sns:SetTopicAttributes",
    "sns:DeleteTopic",
    "sns:ListTagsForResource",
    "sns:TagResource",
    "sns:UntagResource",
  ],
  aws_sns_topic_subscription: [
    "sns:Subscribe",
    "sns:Unsubscribe",
    "sns:GetSubscriptionAttributes",
    "sns:SetSubscriptionAttributes",
    "sns:ListSubscriptionsByTopic",
  ],
  aws_kms_key: [
    "kms:CreateKey",
    "kms:DescribeKey",
    "kms:GetKeyPolicy",
    "kms:PutKeyPolicy",
    "kms:GetKeyRotationStatus",
    "kms:EnableKeyRotation",
    "kms:DisableKeyRotation",
    "kms:EnableKey",
    "kms:DisableKey",
    "kms:UpdateKeyDescription",
    "kms:ListResourceTags",
    "kms:TagResource",
    "kms:UntagResource",
    "kms:ScheduleKeyDeletion",
  ],
  aws_route53_record: [
    "route53:ChangeResourceRecordSets",
    "route53:ListResourceRecordSets",
    "route53:GetHostedZone",
    "route53:GetChange",
  ],
  aws_route53_health_check: [
    "route53:CreateHealthCheck",
    "route53:GetHealthCheck",
    "route53:UpdateHealthCheck",
    "route53:DeleteHealthCheck",
    "route53:ListTagsForResource",
    "route53:ChangeTagsForResource",
  ],
  aws_acm_certificate: [
    "acm:RequestCertificate",
    "acm:DescribeCertificate",
    "acm:ListTagsForCertificate",
    "acm:AddTagsToCertificate",
    "acm:RemoveTagsFromCertificate",
    "acm:UpdateCertificateOptions",
    "acm:DeleteCertificate",
  ],
  aws_acm_certificate_validation: ["acm:DescribeCertificate"],
  aws_autoscaling_group: [
    "autoscaling:CreateAutoScalingGroup",
    "autoscaling:UpdateAutoScalingGroup",
    "autoscaling:DeleteAutoScalingGroup",
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeScalingActivities",
    "autoscaling:CreateOrUpdateTags",
    "autoscaling:DeleteTags",
    "autoscaling:AttachTrafficSources",
    "autoscaling:DetachTrafficSources",
    "autoscaling:DescribeTrafficSources",
    "autoscaling:AttachLoadBalancerTargetGroups",
    "autoscaling:DetachLoadBalancerTargetGroups",
    "autoscaling:DescribeLoadBalancerTargetGroups",
    "autoscaling:StartInstanceRefresh",
    "autoscaling:DescribeInstanceRefreshes",
    "autoscaling:CancelInstanceRefresh",
    "autoscaling:DescribeLifecycleHooks",
    "autoscaling:DescribeWarmPool",
    "autoscaling:EnableMetricsCollection",
    "autoscaling:DisableMetricsCollection",
    "autoscaling:SuspendProcesses",
    "autoscaling:ResumeProcesses",
    "autoscaling:SetInstanceProtection",
    "ec2:RunInstances",
    "ec2:DescribeLaunchTemplateVersions",
    "iam:PassRole",
    "iam:CreateServiceLinkedRole",
    // Waiting for capacity: the hosts healthy in the group's target groups.
    "elasticloadbalancing:DescribeTargetHealth",
  ],
  aws_lb: [
    "elasticloadbalancing:CreateLoadBalancer",
    "elasticloadbalancing:DescribeLoadBalancers",
    "elasticloadbalancing:DescribeLoadBalancerAttributes",
    "elasticloadbalancing:ModifyLoadBalancerAttributes",
    "elasticloadbalancing:SetSecurityGroups",
    "elasticloadbalancing:SetSubnets",
    "elasticloadbalancing:SetIpAddressType",
    "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:AddTags",
    "elasticloadbalancing:RemoveTags",
    "elasticloadbalancing:DescribeTags",
    "iam:CreateServiceLinkedRole",
    // Read back with every load balancer (its minimum capacity units), whether or not the stack sets one.
    "elasticloadbalancing:DescribeCapacityReservation",
  ],
  aws_lb_listener: [
    "elasticloadbalancing:CreateListener",
    "elasticloadbalancing:DescribeListeners",
    "elasticloadbalancing:DescribeListenerAttributes",
    "elasticloadbalancing:ModifyListener",
    "elasticloadbalancing:ModifyListenerAttributes",
    "elasticloadbalancing:DeleteListener",
    "elasticloadbalancing:AddTags",
    "elasticloadbalancing:RemoveTags",
    "elasticloadbalancing:DescribeTags",
  ],
  aws_lb_target_group: [
    "elasticloadbalancing:CreateTargetGroup",
    "elasticloadbalancing:DescribeTargetGroups",
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:ModifyTargetGroup",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
    "elasticloadbalancing:DeleteTargetGroup",
    "elasticloadbalancing:AddTags",
    "elasticloadbalancing:RemoveTags",
    "elasticloadbalancing:DescribeTags",
  ],
  aws_db_instance: [
    "rds:CreateDBInstance",
    "rds:DescribeDBInstances",
    "rds:ModifyDBInstance",
    "rds:RebootDBInstance",
    "rds:DeleteDBInstance",
    "rds:CreateDBSnapshot",
    "rds:AddTagsToResource",
    "rds:RemoveTagsFromResource",
    "rds:ListTagsForResource",
    "iam:CreateServiceLinkedRole",
    // The master user's password, which RDS makes and keeps in Secrets Manager with the caller's rights.
    "secretsmanager:CreateSecret",
    "secretsmanager:TagResource",
    "secretsmanager:RotateSecret",
    "secretsmanager:DescribeSecret",
    "kms:DescribeKey",
    "kms:CreateGrant",
    "kms:GenerateDataKey",
    "kms:Decrypt",
  ],
  aws_db_parameter_group: [
    "rds:CreateDBParameterGroup",
    "rds:DescribeDBParameterGroups",
    "rds:DescribeDBParameters",
    "rds:ModifyDBParameterGroup",
    "rds:ResetDBParameterGroup",
    "rds:DeleteDBParameterGroup",
    "rds:AddTagsToResource",
    "rds:RemoveTagsFromResource",
    "rds:ListTagsForResource",
  ],
  aws_db_subnet_group: [
    "rds:CreateDBSubnetGroup",
    "rds:DescribeDBSubnetGroups",
    "rds:ModifyDBSubnetGroup",
    "rds:DeleteDBSubnetGroup",
    "rds:AddTagsToResource",
    "rds:RemoveTagsFromResource",
    "rds:ListTagsForResource",
  ],
};

/** The services' names in the statements' Sids. */
const SERVICE_NAMES: Readonly<Record<string, string>> = {
  acm: "Acm",
  autoscaling: "AutoScaling",
  cloudwatch: "CloudWatch",
  dlm: "Dlm",
  ec2: "Ec2",
  elasticloadbalancing: "ElasticLoadBalancing",
  iam: "Iam",
  kms: "Kms",
  logs: "Logs",
  rds: "Rds",
  route53: "Route53",
  secretsmanager: "SecretsManager",
  sns: "Sns",
  ssm: "Ssm",
  sts: "Sts",
  tag: "Tagging",
};

/** One statement of an IAM policy. */
export interface PolicyStatement {
  readonly Sid: string;
  readonly Effect: "Allow";
  readonly Action: string[];
  readonly Resource: string | string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string[]>>>>;
}

/** The types (resources, and data sources as `data.<type>`) of the stacks, sorted. */
export function stackTypes(stacks: readonly StackJson[]): string[] {
  const types = new Set<string>();
  for (const stack of stacks) {
    for (const type of Object.keys(stack.resource ?? {})) types.add(type);
    for (const type of Object.keys(stack.data ?? {})) types.add(`data.${type}`);
  }
  return [...types].sort();
}

/** The stacks' types that TYPE_ACTIONS lacks. */
export function unmappedTypes(stacks: readonly StackJson[]): string[] {
  return stackTypes(stacks).filter((type) => !(type in TYPE_ACTIONS));
}

/** The S3 backends' buckets and KMS keys, for the state's statements. */
function stateStatements(stacks: readonly StackJson[]): PolicyStatement[] {
  const backends = stacks
    .map(
      (stack) =>
        (stack.terraform as { backend?: { s3?: { bucket: string; kms_key_id?: string } } } | undefined)?.backend?.s3,
    )
    .filter((backend): backend is { bucket: string; kms_key_id?: string } => backend !== undefined);
  const buckets = [...new Set(backends.map((backend) => backend.bucket))].sort();
  const keys = [...new Set(backends.flatMap((backend) => (backend.kms_key_id ? [backend.kms_key_id] : [])))].sort();
  if (buckets.length === 0) return [];
  return [
    {
      Sid: "TerraformState",
      Effect: "Allow",
      Action: ["s3:ListBucket", "s3:GetObject", "s3:PutObject"],
      Resource: buckets.flatMap((bucket) => [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`]),
    },
    {
      Sid: "TerraformLockFile",
      Effect: "Allow",
      Action: ["s3:DeleteObject"],
      Resource: buckets.map((bucket) => `arn:aws:s3:::${bucket}/*.tflock`),
    },
    ...stateKeyStatements(keys),
  ];
}

/**
 * The state key's statements. IAM matches a KMS permission against the key's ARN, never an alias's (a
 * statement naming `…:alias/crm-host-tfstate` allows nothing), and the settings may name the key by either.
 * A key ARN is the resource itself. An alias ARN becomes every key of its account and Region (`…:key/*`,
 * the settings hold no key id to name), narrowed by `kms:ResourceAliases` to the key the alias points to:
 * one key, as with its ARN, and it stays right when the alias is moved to a new key.
 */
function stateKeyStatements(keys: readonly string[]): PolicyStatement[] {
  const actions = ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"];
  const keyArns = keys.filter((key) => /:key\//.test(key));
  const aliasArns = keys.filter((key) => /:alias\//.test(key));
  return [
    ...(keyArns.length
      ? [{ Sid: "TerraformStateKey", Effect: "Allow" as const, Action: actions, Resource: keyArns }]
      : []),
    ...(aliasArns.length
      ? [
          {
            Sid: "TerraformStateKeyByAlias",
            Effect: "Allow" as const,
            Action: actions,
            Resource: [...new Set(aliasArns.map((arn) => arn.replace(/:alias\/.*$/, ":key/*")))].sort(),
            Condition: {
              "ForAnyValue:StringEquals": {
                "kms:ResourceAliases": [
                  ...new Set(aliasArns.map((arn) => arn.slice(arn.indexOf(":alias/") + 1))),
                ].sort(),
              },
            },
          },
        ]
      : []),
  ];
}

/** The deploy role's policy for the stacks: a statement per service, then the state's. */
export function deployPolicy(stacks: readonly StackJson[]): { Version: "2012-10-17"; Statement: PolicyStatement[] } {
  const unmapped = unmappedTypes(stacks);
  if (unmapped.length > 0) {
    throw new Error(
      `scripts/docs/deploy-policy.ts: TYPE_ACTIONS lacks ${unmapped.join(", ")}: add the actions the AWS provider calls for each`,
    );
  }
  const byService = new Map<string, Set<string>>();
  for (const type of stackTypes(stacks)) {
    for (const action of TYPE_ACTIONS[type]) {
      const service = action.split(":")[0];
      if (!byService.has(service)) byService.set(service, new Set());
      byService.get(service)!.add(action);
    }
  }
  const statements = [...byService.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([service, actions]): PolicyStatement => ({
      Sid: SERVICE_NAMES[service] ?? service,
      Effect: "Allow",
      Action: [...actions].sort(),
      Resource: "*",
    }));
  return { Version: "2012-10-17", Statement: [...statements, ...stateStatements(stacks)] };
}

/** The policy as the file users attach: JSON, a statement's actions wrapped at about 120 characters, so that a page shows it whole. */
export function deployPolicyJson(stacks: readonly StackJson[]): string {
  const policy = deployPolicy(stacks);
  const statements = policy.Statement.map((statement) => {
    const lines: string[] = [];
    let line = "";
    for (const action of statement.Action.map((name) => JSON.stringify(name))) {
      if (line && line.length + action.length + 2 > 112) {
        lines.push(`${line},`);
        line = "";
      }
      line = line ? `${line}, ${action}` : action;
    }
    lines.push(line);
    const condition = statement.Condition ? `,\n      "Condition": ${JSON.stringify(statement.Condition)}` : "";
    return (
      `    {\n      "Sid": ${JSON.stringify(statement.Sid)}, "Effect": "Allow", "Resource": ${JSON.stringify(statement.Resource)},\n` +
      `      "Action": [\n${lines.map((text) => `        ${text}`).join("\n")}\n      ]${condition}\n    }`
    );
  });
  return `{\n  "Version": "${policy.Version}",\n  "Statement": [\n${statements.join(",\n")}\n  ]\n}\n`;
}
