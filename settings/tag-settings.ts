/**
 * The optional `tags` setting: the user's own tags (cost allocation, owner, environment), which the AWS
 * provider's `default_tags` puts on every resource of the stack that takes tags (main.ts), and which the
 * scale-out topology's launch template also gives the hosts and their volumes (default_tags does not
 * reach what Auto Scaling launches). Checked against AWS's tag limits before anything is synthesized.
 */
import { z } from "zod";
import { settingRules } from "./rules";

/** AWS's longest tag key and value, in characters (Tagging AWS resources, "Tag naming limits"). */
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 256;

/**
 * Most user tags: AWS allows 50 per resource; the stack's own tags ({@link RESERVED_TAG_KEYS}) and a few
 * added by hand must still fit on the resources that carry them.
 */
export const MAX_USER_TAGS = 40;

/** Keys the stack sets itself (names, the snapshot policy's target, the snapshots' tags): a user tag would override or confuse them. */
export const RESERVED_TAG_KEYS = ["Name", "Backup", "Stack", "Instance"] as const;

/**
 * The characters every AWS service accepts in tags: letters and digits of any script, the space and
 * `_ . : / = + - @` (AWS's `[\p{L}\p{Z}\p{N}_.:/=+\-@]`, without the invisible spaces of \p{Z}).
 */
const TAG_KEY = new RegExp(`^(?!aws:)[\\p{L}\\p{N} _.:/=+@-]{1,${MAX_TAG_KEY_LENGTH}}$`, "iu");
const TAG_VALUE = new RegExp(`^[\\p{L}\\p{N} _.:/=+@-]{0,${MAX_TAG_VALUE_LENGTH}}$`, "u");

const CHARACTERS = "letters, digits, spaces and _ . : / = + - @";
export const TAG_KEY_EXPECTED =
  `a tag key of 1 to ${MAX_TAG_KEY_LENGTH} ${CHARACTERS}, not starting with aws: (in any case, AWS's own prefix), ` +
  `and none of ${RESERVED_TAG_KEYS.join(", ")} (the stack's own tags)`;
export const TAG_VALUE_EXPECTED = `a tag value of 0 to ${MAX_TAG_VALUE_LENGTH} ${CHARACTERS}`;
const TAGS_EXPECTED =
  `an object of at most ${MAX_USER_TAGS} tags, each key ${TAG_KEY_EXPECTED.replace(/^a tag key of /, "")}, ` +
  `each value ${TAG_VALUE_EXPECTED.replace(/^a tag value of /, "")}`;

const tagKey = z
  .string({ error: TAG_KEY_EXPECTED })
  .regex(TAG_KEY, { error: TAG_KEY_EXPECTED })
  .refine((key) => !(RESERVED_TAG_KEYS as readonly string[]).includes(key), { error: TAG_KEY_EXPECTED });
const tagValue = z.string({ error: TAG_VALUE_EXPECTED }).regex(TAG_VALUE, { error: TAG_VALUE_EXPECTED });
settingRules.add(tagValue, { expected: TAG_VALUE_EXPECTED });

/** The `tags` setting: key → value, each within AWS's limits. */
export const tagsSchema = z
  .record(tagKey, tagValue, { error: (issue) => (issue.code === "invalid_key" ? TAG_KEY_EXPECTED : TAGS_EXPECTED) })
  .refine((tags) => Object.keys(tags).length <= MAX_USER_TAGS, { error: TAGS_EXPECTED })
  .meta({
    description:
      "Your tags (cost allocation, owner, environment), put on every resource of the stack through the AWS provider's " +
      "default_tags, and on the scale-out hosts and their volumes through the launch template. Snapshots carry them through " +
      "the data volume's tags. Default: none.",
  });
settingRules.add(tagsSchema, { expected: TAGS_EXPECTED });
