/**
 * The deploy role's policy (docs/deploy-role-policy.json, shown in docs/github-actions.md): generated from
 * every example's synthesized stack, it must hold the actions of each resource and data source type they
 * have, and a stack that gains a type the map lacks must fail here (and in `npm run docs`).
 */
import { readFileSync } from "fs";
import { DEPLOY_POLICY_FILE, EXAMPLE_SETTINGS_FILES, exampleStackJson } from "../../scripts/docs";
import { deployPolicy, stackTypes, TYPE_ACTIONS, unmappedTypes } from "../../scripts/docs/deploy-policy";
import { StackJson } from "../../scripts/docs/terraform-json";

const stacks: StackJson[] = EXAMPLE_SETTINGS_FILES.map((file) => exampleStackJson(file));
const policy = JSON.parse(readFileSync(DEPLOY_POLICY_FILE, "utf8")) as ReturnType<typeof deployPolicy>;
const actions = new Set(policy.Statement.flatMap((statement) => statement.Action));

describe("the deploy role's policy", () => {
  it("is made from every example (the default, dev, prod and scale-out), and every type they hold is mapped", () => {
    expect(EXAMPLE_SETTINGS_FILES.map((file) => file.split("/").slice(-2).join("/"))).toEqual([
      "settings/example.json",
      "examples/dev.json",
      "examples/prod.json",
      "examples/scale-out.json",
    ]);
    expect(unmappedTypes(stacks)).toEqual([]);
    expect(JSON.parse(readFileSync(DEPLOY_POLICY_FILE, "utf8"))).toEqual(deployPolicy(stacks));
  });

  it("refuses a stack that gains a type the map lacks, naming it", () => {
    const grown: StackJson = { ...stacks[0], resource: { ...stacks[0].resource, aws_efs_file_system: { data: {} } } };
    expect(unmappedTypes([grown])).toEqual(["aws_efs_file_system"]);
    expect(() => deployPolicy([grown])).toThrow("TYPE_ACTIONS lacks aws_efs_file_system");
  });

  it("holds each type's create, read and delete calls, for every service of every example", () => {
    for (const type of stackTypes(stacks)) for (const action of TYPE_ACTIONS[type]) expect(actions).toContain(action);
    for (const action of [
      "dlm:CreateLifecyclePolicy",
      "sns:CreateTopic",
      "sns:Subscribe",
      "kms:CreateKey",
      "route53:ChangeResourceRecordSets",
      "acm:RequestCertificate",
      "autoscaling:CreateAutoScalingGroup",
      "elasticloadbalancing:CreateLoadBalancer",
      "rds:CreateDBInstance",
      "secretsmanager:CreateSecret",
      "ssm:GetParameter",
      "ssm:GetParametersByPath",
      "cloudwatch:PutMetricAlarm",
      "ec2:RunInstances",
      "ec2:CreateVolume",
      "iam:PassRole",
      "iam:CreateRole",
      "tag:GetResources",
      "s3:PutObject",
      // What the provider calls beyond create, read and delete (found by __tests__/engine/deploy-policy-judge.test.ts):
      // the data volume's final snapshot, a load balancer's capacity reservation, the group's wait for healthy hosts.
      "ec2:CreateSnapshot",
      "elasticloadbalancing:DescribeCapacityReservation",
      "elasticloadbalancing:DescribeTargetHealth",
    ])
      expect(actions).toContain(action);
    // Each create has its delete.
    for (const [create, remove] of [
      ["ec2:RunInstances", "ec2:TerminateInstances"],
      ["dlm:CreateLifecyclePolicy", "dlm:DeleteLifecyclePolicy"],
      ["rds:CreateDBInstance", "rds:DeleteDBInstance"],
      ["kms:CreateKey", "kms:ScheduleKeyDeletion"],
      ["acm:RequestCertificate", "acm:DeleteCertificate"],
    ]) {
      expect([actions.has(create), actions.has(remove)]).toEqual([true, true]);
    }
  });

  it("grants the state's KMS key on key ARNs, which IAM matches, never on an alias ARN, which it does not: an alias by kms:ResourceAliases", () => {
    const keyStatements = policy.Statement.filter((statement) => statement.Sid.startsWith("TerraformStateKey"));
    expect(keyStatements).toEqual([
      {
        Sid: "TerraformStateKeyByAlias",
        Effect: "Allow",
        Action: ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"],
        Resource: ["arn:aws:kms:us-east-1:123456789012:key/*"],
        Condition: { "ForAnyValue:StringEquals": { "kms:ResourceAliases": ["alias/crm-host-tfstate"] } },
      },
    ]);
    for (const statement of policy.Statement) expect(JSON.stringify(statement.Resource)).not.toMatch(/:alias\//);
    // A key named by its ARN is the resource itself, with no condition.
    const keyArn = "arn:aws:kms:eu-west-1:210987654321:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const byKey = {
      ...stacks[3],
      terraform: { ...stacks[3].terraform, backend: { s3: { bucket: "b-1", kms_key_id: keyArn } } },
    } as StackJson;
    expect(
      deployPolicy([byKey]).Statement.filter((statement) => statement.Sid.startsWith("TerraformStateKey")),
    ).toEqual([
      {
        Sid: "TerraformStateKey",
        Effect: "Allow",
        Action: ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"],
        Resource: [keyArn],
      },
    ]);
  });

  it("is well-formed: service:Action names, one statement per service, and small enough for an inline role policy (10,240 characters)", () => {
    for (const action of actions) expect(action).toMatch(/^[a-z0-9-]+:[A-Z][A-Za-z0-9]+$/);
    const sids = policy.Statement.map((statement) => statement.Sid);
    expect(new Set(sids).size).toBe(sids.length);
    expect(readFileSync(DEPLOY_POLICY_FILE, "utf8").replace(/\s/g, "").length).toBeLessThan(10_240);
  });
});
