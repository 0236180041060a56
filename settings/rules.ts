/**
 * Building blocks of the settings schemas (zod). Each setting carries a description (for the
 * JSON Schema and docs/settings.md) and an "expected" phrase, which is the message of every check of
 * the setting: a failure then reads `Invalid setting "<name>" (got …): expected <phrase>.`
 * Shapes a JSON Schema can state (type, pattern) are zod checks, so editors check them too;
 * domain rules it cannot state (path segments, one setting relative to another, reserved
 * names) are refinements with the same phrase.
 */
import { partition } from "@aws-sdk/util-endpoints";
import { z } from "zod";
import { closestKey } from "./errors";

/** What a setting must be, as a phrase; kept beside the schema for the settings table of docs/settings.md. */
export interface SettingRule {
  readonly expected: string;
}

/** The rule of every setting schema built here (read by the docs generator). */
export const settingRules = z.registry<SettingRule>();

/**
 * A string setting. `expected` is the message of the type check and of every check that
 * `refine` adds; the description and rule are attached last, to the schema that is used.
 */
export function text(
  description: string,
  expected: string,
  refine: (schema: z.ZodString) => z.ZodString = (schema) => schema,
): z.ZodString {
  const base = z.string({
    error: (issue) => (issue.input === undefined ? `${expected} (the setting is required)` : expected),
  });
  const schema = refine(base).meta({ description });
  settingRules.add(schema, { expected });
  return schema;
}

/** A string setting matching `pattern` in full. */
export function matching(description: string, pattern: RegExp, expected: string): z.ZodString {
  return text(description, expected, (schema) => schema.regex(pattern, { error: expected }));
}

/** Longest path setting, in characters: a file name the script derives from one (`<swapFile>.partial`) stays under 255. */
export const MAX_PATH_LENGTH = 200;

/** An absolute, normalised POSIX path of safe characters; `.` and `..` segments are refused. */
export function absolutePath(
  description: string,
  expected = `an absolute path of at most ${MAX_PATH_LENGTH} characters such as /home/ec2-user/app (letters, digits, / . _ - only; no .. or //)`,
  refine: (schema: z.ZodString) => z.ZodString = (schema) => schema,
): z.ZodString {
  return text(description, expected, (schema) =>
    refine(
      schema
        .regex(new RegExp(`^(?=.{1,${MAX_PATH_LENGTH}}$)(/[A-Za-z0-9._-]+)+$`), { error: expected })
        .refine((path) => !path.split("/").some((part) => part === "." || part === ".."), { error: expected }),
    ),
  );
}

const REGION_NAME = "an AWS region name such as us-east-1, one that exists";
const REGION_EXPECTED = `${REGION_NAME} (in the AWS SDK's list of regions)`;

/**
 * The words of AWS region names (area, partition qualifier, direction). The SDK exports no list of its
 * regions, only the lookup, so the known regions are the names these words make that it knows; a region
 * of a new word is missing from the suggestions (not refused) and fails __tests__/settings/aws-regions.test.ts.
 */
const REGION_AREAS = ["af", "ap", "ca", "cn", "eu", "il", "me", "mx", "sa", "us"];
const REGION_QUALIFIERS = ["", "-gov", "-iso", "-isob", "-isoe", "-isof"];
const REGION_DIRECTIONS = [
  "central",
  "east",
  "west",
  "north",
  "south",
  "northeast",
  "northwest",
  "southeast",
  "southwest",
];
let knownRegions: readonly string[] | undefined;

/** Every region the AWS SDK knows (see REGION_AREAS), asked once. */
export function knownAwsRegions(): readonly string[] {
  if (knownRegions === undefined) {
    const names: string[] = [];
    for (const area of REGION_AREAS) {
      for (const qualifier of REGION_QUALIFIERS) {
        for (const direction of REGION_DIRECTIONS) {
          for (let n = 1; n <= 9; n++) names.push(`${area}${qualifier}-${direction}-${n}`);
        }
      }
    }
    knownRegions = names.filter(isAwsRegion);
  }
  return knownRegions;
}

/**
 * The expected phrase for a refused region, with the known region it is closest to (as for a misspelt key):
 * at most 2 edits, since regions differ from each other by as little as one character.
 */
function regionExpected(input: unknown): string {
  const closest = typeof input === "string" ? closestKey(input, knownAwsRegions(), 2) : undefined;
  return closest === undefined
    ? REGION_EXPECTED
    : `${REGION_NAME} (in the AWS SDK's list of regions; did you mean "${closest}"?)`;
}

/**
 * Whether AWS has this region, as the AWS SDK for JavaScript knows it: `partition(name)` (the
 * lookup its clients resolve endpoints with) describes the regions of its partition data, and
 * only those; a name that merely looks like a region gets the partition's defaults, no description.
 */
export function isAwsRegion(name: string): boolean {
  return typeof (partition(name) as { description?: unknown }).description === "string";
}

/**
 * Whether a KMS key or alias ARN is in `region` (and its partition): AWS services encrypt only with a key
 * of their own region. Key ids and alias names (no ARN) are always looked up in the caller's region.
 */
export function isKmsKeyInRegion(keyId: string, region: string): boolean {
  if (!keyId.startsWith("arn:")) return true;
  const [, keyPartition, , keyRegion] = keyId.split(":");
  return keyRegion === region && keyPartition === partition(region).name;
}

/** The start of the ARN of a KMS key in `region`, for messages: `arn:aws:kms:us-east-1:`. */
export function kmsArnStart(region: string): string {
  return `arn:${partition(region).name}:kms:${region}:`;
}

/** A setting naming an AWS region that exists (a typo such as eu-wset-1 is refused). */
export function awsRegion(description: string): z.ZodString {
  const error = (issue: { input?: unknown }) => regionExpected(issue.input);
  return text(description, REGION_EXPECTED, (schema) =>
    schema.regex(/^[a-z]{2}(-[a-z]+)+-[0-9]$/, { error }).refine(isAwsRegion, { error }),
  );
}

/** A whole-number setting from `min` to `max`. */
export function wholeNumber(description: string, min: number, max: number, unit: string): z.ZodNumber {
  const expected = `a whole number of ${unit} from ${min} to ${max}`;
  const schema = z
    .number({ error: expected })
    .int({ error: expected })
    .min(min, { error: expected })
    .max(max, { error: expected })
    .meta({ description });
  settingRules.add(schema, { expected });
  return schema;
}

/** A setting that is one of `values`. */
export function oneOf<const T extends readonly [string, ...string[]]>(
  description: string,
  values: T,
): z.ZodEnum<{ [K in T[number]]: K }> {
  const expected = `one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
  const schema = z
    .enum(values, {
      error: (issue) => (issue.input === undefined ? `${expected} (the setting is required)` : expected),
    })
    .meta({ description });
  settingRules.add(schema, { expected });
  return schema;
}

/** A true/false setting. */
export function flag(description: string): z.ZodBoolean {
  const expected = "true or false";
  const schema = z
    .boolean({
      error: (issue) => (issue.input === undefined ? `${expected} (the setting is required)` : expected),
    })
    .meta({ description });
  settingRules.add(schema, { expected });
  return schema;
}
