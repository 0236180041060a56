/**
 * settings/aws-regions.json, which the settings read instead of loading the AWS SDK at each
 * synthesis, answers as the SDK does (whether the file is current is checked with the docs).
 */
import { partition } from "@aws-sdk/util-endpoints";
import AWS_REGIONS from "../../settings/aws-regions.json";
import { isAwsRegion } from "../../settings/rules";

const sdkDescription = (name: string) => (partition(name) as { description?: string }).description;

describe("the AWS region list", () => {
  const regions = Object.entries(AWS_REGIONS.regions);

  it("holds every commercial, China and GovCloud region the SDK describes", () => {
    expect(regions.length).toBeGreaterThan(30);
    expect(regions.map(([name]) => name)).toEqual(expect.arrayContaining(["us-east-1", "eu-central-2", "cn-north-1", "us-gov-west-1"]));
  });

  it.each(regions)("%s is described by the SDK as in the list", (name, description) => {
    expect(sdkDescription(name)).toBe(description);
    expect(isAwsRegion(name)).toBe(true);
  });

  it.each(["eu-wset-1", "us-east-9", "mars-north-1", "US-EAST-1", "constructor", "__proto__"])(
    "%s is neither in the list nor described by the SDK",
    (name) => {
      expect(isAwsRegion(name)).toBe(false);
      expect(sdkDescription(name)).toBeUndefined();
    },
  );
});
