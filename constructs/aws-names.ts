/**
 * The names the stack derives for AWS from the settings (`stackName`, `instanceName`), each checked at
 * synthesis against its resource's documented limit, so that a name AWS or the provider would refuse never
 * reaches a plan. A name that must be cut to fit ends in a short stable hash of the whole name, so that two
 * stacks whose names differ only past the cut still get names of their own.
 */
import { createHash } from "crypto";

/** A resource's limit on a name: its longest length and its characters, in words for the message. */
export interface AwsNameRule {
  readonly what: string;
  readonly max: number;
  readonly pattern: RegExp;
  readonly limit: string;
}

/** How long the unique suffix is that the AWS provider adds to a `name_prefix` (a timestamp and a counter). */
export const NAME_PREFIX_SUFFIX_LENGTH = 26;

/* eslint-disable no-control-regex -- control characters (C0 and DEL) are what AWS refuses in these names */
const NO_CONTROL = /^[^\u0000-\u001f\u007f]+$/;
const NO_COLON_NOR_CONTROL = /^[^:\u0000-\u001f\u007f]+$/;
/* eslint-enable no-control-regex */

/** The rules of the names the stack derives, by kind. */
export const AWS_NAME_RULES = {
  launchTemplateNamePrefix: {
    // The provider's own limit (name 125, prefix 99: terraform validate says so), tighter than EC2's 128.
    what: "launch template name prefix",
    max: 125 - NAME_PREFIX_SUFFIX_LENGTH,
    pattern: /^[A-Za-z0-9()./_-]{3,}$/,
    limit: `3 to 125 letters, digits and ( ) . / _ - for the name, less the ${NAME_PREFIX_SUFFIX_LENGTH} characters the provider adds to a prefix`,
  },
  autoScalingGroupNamePrefix: {
    what: "Auto Scaling group name prefix",
    max: 255 - NAME_PREFIX_SUFFIX_LENGTH,
    pattern: NO_COLON_NOR_CONTROL,
    limit: `255 characters without : for the name, less the ${NAME_PREFIX_SUFFIX_LENGTH} characters the provider adds to a prefix`,
  },
  rdsIdentifier: {
    what: "RDS instance identifier",
    max: 63,
    pattern: /^[a-z](?!.*--)([a-z0-9-]*[a-z0-9])?$/,
    limit:
      "1 to 63 lower-case letters, digits and hyphens, starting with a letter, without two hyphens in a row or one at the end",
  },
  dbSubnetGroupNamePrefix: {
    what: "DB subnet group name prefix",
    max: 255 - NAME_PREFIX_SUFFIX_LENGTH,
    pattern: /^[a-z0-9 ._-]+$/,
    limit: `255 lower-case letters, digits, spaces and . _ - for the name, less the ${NAME_PREFIX_SUFFIX_LENGTH} characters the provider adds to a prefix`,
  },
  dbParameterGroupNamePrefix: {
    // The provider's limit (terraform validate: "cannot be greater than 226 characters").
    what: "DB parameter group name prefix",
    max: 226,
    pattern: /^[a-z](?!.*--)[a-z0-9-]*$/,
    limit:
      "226 lower-case letters, digits and hyphens, starting with a letter, without two hyphens in a row, for a prefix",
  },
  snsTopicName: {
    what: "SNS topic name",
    max: 256,
    pattern: /^[A-Za-z0-9_-]+$/,
    limit: "1 to 256 letters, digits, _ and -",
  },
  alarmName: {
    what: "CloudWatch alarm name",
    max: 255,
    pattern: NO_CONTROL,
    limit: "1 to 255 characters without control characters",
  },
  logGroupName: {
    what: "CloudWatch Logs log group name",
    max: 512,
    pattern: /^[A-Za-z0-9._/#-]+$/,
    limit: "1 to 512 letters, digits and . _ / # -",
  },
  dlmDescription: {
    what: "lifecycle policy description",
    max: 500,
    pattern: /^[0-9A-Za-z _-]+$/,
    limit: "1 to 500 letters, digits, spaces, _ and -",
  },
  ssmParameterName: {
    what: "Parameter Store parameter name",
    max: 1011,
    pattern: /^(?!\/(aws|ssm))(\/[A-Za-z0-9_.-]+){1,15}$/i,
    limit: "1 to 1011 characters, / and letters, digits, _ . -, at most 15 levels, not starting with aws or ssm",
  },
  tagValue: {
    what: "tag value",
    max: 256,
    pattern: /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u,
    limit: "256 letters, digits, spaces and _ . : / = + - @",
  },
} as const satisfies Record<string, AwsNameRule>;

export type AwsNameKind = keyof typeof AWS_NAME_RULES;

/** A problem in what the stack derives: the settings it derives from are within their own rules, so the fix is here. */
export class AwsNameError extends Error {}

/**
 * `name`, checked against the rule of `kind`; throws AwsNameError naming the name, where it comes from and the limit.
 * `from` names the settings it derives from, for the message.
 */
export function awsName(kind: AwsNameKind, name: string, from = "stackName and instanceName"): string {
  const rule: AwsNameRule = AWS_NAME_RULES[kind];
  if (name.length > rule.max || !rule.pattern.test(name)) {
    throw new AwsNameError(
      `The ${rule.what} ${JSON.stringify(name)} derived from ${from} is ${name.length} characters; AWS takes ${rule.limit}.`,
    );
  }
  return name;
}

/** The first 8 hexadecimal digits of the SHA-256 of `text`: stable across runs and machines. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

/**
 * `full` when it has at most `max` characters; else its start, a hyphen and shortHash(full) in `max`
 * characters (hyphens at the cut dropped, so that no `--` forms).
 */
export function fitted(full: string, max: number): string {
  if (full.length <= max) return full;
  return `${full.slice(0, max - 9).replace(/-+$/, "")}-${shortHash(full)}`;
}
