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
    expect(EXAMPLE_SETTINGS_FILES.map((file) => file.split("/").slice(-2).join("/")))
      .toEqual(["settings/example.json", "examples/dev.json", "examples/prod.json", "examples/scale-out.json"]);
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
      "dlm:CreateLifecyclePolicy", "sns:CreateTopic", "sns:Subscribe", "kms:CreateKey", "route53:ChangeResourceRecordSets", "acm:RequestCertificate",
      "autoscaling:CreateAutoScalingGroup", "elasticloadbalancing:CreateLoadBalancer", "rds:CreateDBInstance", "secretsmanager:CreateSecret",
      "ssm:GetParameter", "ssm:GetParametersByPath", "cloudwatch:PutMetricAlarm", "ec2:RunInstances", "ec2:CreateVolume", "iam:PassRole",
      "iam:CreateRole", "tag:GetResources", "s3:PutObject",
    ]) expect(actions).toContain(action);
    // Each create has its delete.
    for (const [create, remove] of [["ec2:RunInstances", "ec2:TerminateInstances"], ["dlm:CreateLifecyclePolicy", "dlm:DeleteLifecyclePolicy"],
      ["rds:CreateDBInstance", "rds:DeleteDBInstance"], ["kms:CreateKey", "kms:ScheduleKeyDeletion"], ["acm:RequestCertificate", "acm:DeleteCertificate"]]) {
      expect([actions.has(create), actions.has(remove)]).toEqual([true, true]);
    }
  });

  it("is well-formed: service:Action names, one statement per service, and small enough for an inline role policy (10,240 characters)", () => {
    for (const action of actions) expect(action).toMatch(/^[a-z0-9-]+:[A-Z][A-Za-z0-9]+$/);
    const sids = policy.Statement.map((statement) => statement.Sid);
    expect(new Set(sids).size).toBe(sids.length);
    expect(readFileSync(DEPLOY_POLICY_FILE, "utf8").replace(/\s/g, "").length).toBeLessThan(10_240);
  });
});
