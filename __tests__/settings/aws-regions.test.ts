/**
 * Region names are judged by the AWS SDK's own lookup (`partition`), so that a typo such as
 * eu-wset-1 stops synthesis: every region of its partition data is accepted, nothing else.
 * The regions a typo is compared with are every one of that data (the SDK exports no list).
 */
import { partition } from "@aws-sdk/util-endpoints";
import { readFileSync } from "fs";
import { isAwsRegion, knownAwsRegions } from "../../settings/rules";

describe("isAwsRegion", () => {
  it.each(["us-east-1", "eu-central-2", "ap-southeast-5", "cn-north-1", "us-gov-west-1", "il-central-1"])(
    "accepts %s",
    (name) => {
      expect(isAwsRegion(name)).toBe(true);
      expect(partition(name).name).toMatch(/^aws/);
    },
  );

  it.each(["eu-wset-1", "us-east-9", "mars-north-1", "US-EAST-1", "constructor", "__proto__", "", "us-east-1 "])(
    "refuses %j, which only looks like a region or is not one",
    (name) => expect(isAwsRegion(name)).toBe(false),
  );
});

describe("knownAwsRegions", () => {
  // The SDK's partition data, as its bundle holds it: each region is a key with a description.
  const bundle = readFileSync(require.resolve("@aws-sdk/core/client"), "utf8");
  const sdkRegions = [...bundle.matchAll(/"([a-z]{2}(?:-[a-z]+)+-\d+)": \{\s*"description"/g)].map((match) => match[1]);

  it("is every region of the SDK's partition data, and only those (a region of a new word fails here)", () => {
    expect(sdkRegions.length).toBeGreaterThan(40);
    expect([...knownAwsRegions()].sort()).toEqual([...new Set(sdkRegions)].sort());
  });
});
