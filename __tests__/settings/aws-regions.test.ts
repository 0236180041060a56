/**
 * Region names are judged by the AWS SDK's own lookup (`partition`), so that a typo such as
 * eu-wset-1 stops synthesis: every region of its partition data is accepted, nothing else.
 */
import { partition } from "@aws-sdk/util-endpoints";
import { isAwsRegion } from "../../settings/rules";

describe("isAwsRegion", () => {
  it.each(["us-east-1", "eu-central-2", "ap-southeast-5", "cn-north-1", "us-gov-west-1", "il-central-1"])("accepts %s", (name) => {
    expect(isAwsRegion(name)).toBe(true);
    expect(partition(name).name).toMatch(/^aws/);
  });

  it.each(["eu-wset-1", "us-east-9", "mars-north-1", "US-EAST-1", "constructor", "__proto__", "", "us-east-1 "])(
    "refuses %j, which only looks like a region or is not one",
    (name) => expect(isAwsRegion(name)).toBe(false),
  );
});
