import { parseStackSettings } from "../../settings/stack-settings";
import { MAX_USER_TAGS } from "../../settings/tag-settings";
import exampleSettings from "../../settings/example.json";
import scaleOutSettings from "../../examples/scale-out.json";
import { settingsErrorOf } from "../support/synth";

const KEY_EXPECTED =
  "expected a tag key of 1 to 128 letters, digits, spaces and _ . : / = + - @, not starting with aws:";

describe("the tags setting", () => {
  it("is empty by default, and keeps the tags given, in any script", () => {
    expect(parseStackSettings(exampleSettings).tags).toEqual({});
    const tags = { CostCenter: "crm-42", "owner:team": "ops@example.com", Équipe: "Ventes 北", empty: "" };
    expect(parseStackSettings({ ...exampleSettings, tags }).tags).toEqual(tags);
  });

  it.each([
    ["aws:createdBy", "AWS's own prefix"],
    ["AWS:cost", "AWS's own prefix, in another case"],
    ["", "an empty key"],
    ["k".repeat(129), "a key over 128 characters"],
    ["cost\ncenter", "a newline"],
    ["cost#center", "a character outside AWS's set"],
    ["Name", "the stack's own Name tag"],
    ["Backup", "the snapshot policy's target tag"],
  ])("refuses the key %j (%s), naming it", (key) => {
    const message = settingsErrorOf({ ...exampleSettings, tags: { [key]: "x" } });
    expect(message).toContain(`Invalid setting "tags.${key}"`);
    expect(message).toContain(KEY_EXPECTED);
  });

  it.each([["v".repeat(257)], ["line\u2028break"], ["semi;colon"], [5]])(
    "refuses the value %j, naming its key",
    (value) => {
      expect(settingsErrorOf({ ...exampleSettings, tags: { Owner: value } })).toMatch(
        /^Invalid setting "tags\.Owner" \(got .*\): expected a tag value of 0 to 256 letters, digits, spaces and _ \. : \/ = \+ - @\.$/,
      );
    },
  );

  it(`refuses more than ${MAX_USER_TAGS} tags, and a tags value that is not an object`, () => {
    const many = Object.fromEntries(Array.from({ length: MAX_USER_TAGS + 1 }, (_, index) => [`t${index}`, "x"]));
    expect(settingsErrorOf({ ...exampleSettings, tags: many })).toContain(
      `expected an object of at most ${MAX_USER_TAGS} tags`,
    );
    expect(() =>
      parseStackSettings({ ...exampleSettings, tags: Object.fromEntries(Object.entries(many).slice(1)) }),
    ).not.toThrow();
    expect(settingsErrorOf({ ...exampleSettings, tags: ["CostCenter"] })).toContain('Invalid setting "tags"');
  });
});

describe("the snapshotCopyRegion setting", () => {
  it("is unset by default and takes another existing region", () => {
    expect(parseStackSettings(exampleSettings).snapshotCopyRegion).toBeUndefined();
    expect(parseStackSettings({ ...exampleSettings, snapshotCopyRegion: "eu-west-1" }).snapshotCopyRegion).toBe(
      "eu-west-1",
    );
  });

  it("refuses the stack's own region, a region that does not exist, and the scale-out topology, which has no data volume", () => {
    expect(settingsErrorOf({ ...exampleSettings, snapshotCopyRegion: "us-east-1" })).toBe(
      'Invalid setting "snapshotCopyRegion" (got "us-east-1"): expected a region other than the stack\'s own, us-east-1 ' +
        "(the copies are there to survive the loss of that region).",
    );
    expect(settingsErrorOf({ ...exampleSettings, snapshotCopyRegion: "eu-wset-1" })).toContain(
      "expected an AWS region name",
    );
    expect(settingsErrorOf({ ...scaleOutSettings, snapshotCopyRegion: "eu-west-1" })).toContain(
      'Invalid setting "snapshotCopyRegion" (got "eu-west-1"): expected no snapshotCopyRegion with "topology": "scale-out"',
    );
  });
});
