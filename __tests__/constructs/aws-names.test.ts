/**
 * Every name the stack derives for AWS (constructs/aws-names.ts), checked against its resource's limit in the
 * synthesized JSON of both topologies with the longest names the settings allow; names cut to fit end in a
 * hash of the whole name, so that stacks differing only past the cut get names of their own; short names
 * are as they were.
 */
import { Testing } from "cdktf";
import { AWS_NAME_RULES, AwsNameError, AwsNameKind, awsName, fitted, shortHash } from "../../constructs/aws-names";
import { databaseIdentifier } from "../../constructs/managed-database";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";

const LONG_STACK = `Crm${"x".repeat(60)}A`; // 64 characters, the most stackName takes
const LONG_INSTANCE = `Server${"y".repeat(57)}B`; // 64 characters, the most instanceName takes

/** [resource type, attribute, kind of name]: every name the stack derives. */
const DERIVED: [string, string, AwsNameKind][] = [
  ["aws_launch_template", "name_prefix", "launchTemplateNamePrefix"],
  ["aws_autoscaling_group", "name_prefix", "autoScalingGroupNamePrefix"],
  ["aws_db_instance", "identifier", "rdsIdentifier"],
  ["aws_db_subnet_group", "name_prefix", "dbSubnetGroupNamePrefix"],
  ["aws_db_parameter_group", "name_prefix", "dbParameterGroupNamePrefix"],
  ["aws_cloudwatch_log_group", "name", "logGroupName"],
  ["aws_sns_topic", "name", "snsTopicName"],
  ["aws_cloudwatch_metric_alarm", "alarm_name", "alarmName"],
  ["aws_dlm_lifecycle_policy", "description", "dlmDescription"],
  ["aws_ssm_parameter", "name", "ssmParameterName"],
];

/** Name attributes whose values are AWS's own (a metric's, a device's) or fixed by the code, not derived from the settings. */
const FIXED = new Set([
  "aws_cloudwatch_metric_alarm metric_name",
  "aws_volume_attachment device_name",
  "aws_iam_role_policy name",
]);

function synth(changes: Record<string, unknown>): { resource: Record<string, Record<string, any>> } {
  return JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), exampleStackSettings(changes))));
}

/** The derived names of a synthesized stack: [kind, name]. */
function derivedNames(json: { resource: Record<string, Record<string, any>> }): [AwsNameKind, string][] {
  return DERIVED.flatMap(([type, attribute, kind]) =>
    Object.values(json.resource[type] ?? {}).map((block) => [kind, block[attribute]] as [AwsNameKind, string]),
  );
}

/** Every tag value of the stack's resources. */
function tagValues(json: { resource: Record<string, Record<string, any>> }): string[] {
  return Object.values(json.resource)
    .flatMap((blocks) => Object.values(blocks))
    .flatMap((block) => Object.values(block.tags ?? {}) as string[]);
}

const longSingle = synth({
  stackName: LONG_STACK,
  instanceName: LONG_INSTANCE,
  alarmEmail: "ops@example.com",
  secrets: "parameter-store",
});
const longScaleOut = synth({
  stackName: LONG_STACK,
  instanceName: LONG_INSTANCE,
  topology: "scale-out",
  secrets: "parameter-store",
});

describe("the names the stack derives for AWS, with the longest stack and instance names", () => {
  test.each([
    ["single host", longSingle],
    ["scale-out", longScaleOut],
  ])("%s: every name within its resource's limit", (_, json) => {
    const names = derivedNames(json);
    expect(names.length).toBeGreaterThanOrEqual(3);
    for (const [kind, name] of names) {
      const rule = AWS_NAME_RULES[kind];
      expect({ kind, name, fits: name.length <= rule.max && rule.pattern.test(name) }).toEqual({
        kind,
        name,
        fits: true,
      });
    }
    for (const value of tagValues(json).filter((text) => typeof text === "string" && !text.includes("${"))) {
      expect(value.length).toBeLessThanOrEqual(AWS_NAME_RULES.tagValue.max);
    }
  });

  test("the resources whose names AWS limits most are left to the provider's generated names (none derived from the settings)", () => {
    // IAM roles and profiles (64, name_prefix 38), security groups (255), load balancers and target groups (32).
    for (const json of [longSingle, longScaleOut]) {
      for (const type of [
        "aws_iam_role",
        "aws_iam_instance_profile",
        "aws_security_group",
        "aws_lb",
        "aws_lb_target_group",
      ]) {
        for (const block of Object.values(json.resource[type] ?? {}))
          expect([type, block.name, block.name_prefix]).toEqual([type, undefined, undefined]);
      }
    }
    expect(Object.keys(longScaleOut.resource)).toEqual(
      expect.arrayContaining(["aws_lb", "aws_lb_target_group", "aws_iam_role", "aws_security_group"]),
    );
  });

  test("every name, name prefix and identifier the stacks write (not a reference) is one of DERIVED, checked above, or fixed", () => {
    const written = new Set<string>();
    for (const json of [longSingle, longScaleOut]) {
      for (const [type, blocks] of Object.entries(json.resource)) {
        for (const block of Object.values(blocks)) {
          for (const [attribute, value] of Object.entries(block)) {
            if (
              /(^|_)(name|name_prefix|identifier)$/.test(attribute) &&
              typeof value === "string" &&
              !value.includes("${")
            )
              written.add(`${type} ${attribute}`);
          }
        }
      }
    }
    const unchecked = [...written].filter(
      (pair) => !FIXED.has(pair) && !DERIVED.some(([type, attribute]) => pair === `${type} ${attribute}`),
    );
    expect(unchecked).toEqual([]);
    expect(written.size).toBeGreaterThanOrEqual(DERIVED.length);
  });

  test("both topologies derive each kind of name at least once between them", () => {
    const kinds = new Set([...derivedNames(longSingle), ...derivedNames(longScaleOut)].map(([kind]) => kind));
    expect([...kinds].sort()).toEqual(DERIVED.map(([, , kind]) => kind).sort());
  });

  test("the launch template's prefix is cut to 99 characters (the AWS provider's limit for a prefix) with a hash; the group's keeps the whole name", () => {
    const template = Object.values(longScaleOut.resource.aws_launch_template)[0].name_prefix as string;
    const group = Object.values(longScaleOut.resource.aws_autoscaling_group)[0].name_prefix as string;
    expect(template).toHaveLength(99);
    expect(AWS_NAME_RULES.launchTemplateNamePrefix.max).toBe(99);
    expect(template).toBe(
      `${`${LONG_STACK}-${LONG_INSTANCE}`.slice(0, 89)}-${shortHash(`${LONG_STACK}-${LONG_INSTANCE}`)}-`,
    );
    expect(group).toBe(`${LONG_STACK}-${LONG_INSTANCE}-`);
  });

  test("two stacks that differ only past the cut get different RDS identifiers, subnet groups and launch templates", () => {
    const other = synth({
      stackName: `${LONG_STACK.slice(0, -1)}Z`,
      instanceName: `${LONG_INSTANCE.slice(0, -1)}C`,
      topology: "scale-out",
      secrets: "parameter-store",
    });
    const pick = (json: typeof other, type: string, attribute: string) =>
      Object.values(json.resource[type])[0][attribute] as string;
    for (const [type, attribute] of [
      ["aws_db_instance", "identifier"],
      ["aws_db_subnet_group", "name_prefix"],
      ["aws_launch_template", "name_prefix"],
    ]) {
      expect(pick(longScaleOut, type, attribute)).not.toBe(pick(other, type, attribute));
    }
    expect(pick(longScaleOut, "aws_db_instance", "identifier")).toHaveLength(63);
  });

  test("names that fit are as before: no hash", () => {
    expect(databaseIdentifier("CrmHost-scale")).toBe("crmhost-scale-crm");
    expect(databaseIdentifier(`A${"b".repeat(58)}`)).toBe(`a${"b".repeat(58)}-crm`);
    expect(databaseIdentifier(`A${"b".repeat(59)}`)).toMatch(/^ab{49}-[0-9a-f]{8}-crm$/);
    // A cut that lands on a hyphen: never two in a row, never one at the end.
    expect(databaseIdentifier(`A${"b".repeat(48)}--${"c".repeat(20)}`)).toMatch(/^ab{48}-[0-9a-f]{8}-crm$/);
    expect(fitted("short", 10)).toBe("short");
  });

  test("a name beyond its limit is refused at synthesis, naming it, where it comes from and the limit", () => {
    expect(() => awsName("rdsIdentifier", "a--b", "stackName")).toThrow(
      new AwsNameError(
        'The RDS instance identifier "a--b" derived from stackName is 4 characters; AWS takes 1 to 63 lower-case letters, digits and hyphens, ' +
          "starting with a letter, without two hyphens in a row or one at the end.",
      ),
    );
    expect(() => awsName("snsTopicName", "x".repeat(257))).toThrow(AwsNameError);
    expect(() => secretParameterNames("ssmStack")).toThrow(
      /The Parameter Store parameter name "\/ssmStack\/crm\/db-root-password" derived from stackName/,
    );
  });
});
