/**
 * CRM_AWS_PROVIDER_VERSION, the one switch for a machine whose Terraform gets hashicorp/aws from a mirror:
 * unset, the stacks require the binding's version exactly; set, a version of the tested range; anything
 * else stops the check before cdktf with one line naming the value and the range.
 */
import { spawnSync } from "child_process";
import { Testing } from "cdktf";
import { resolve } from "path";
import { CrmHostStack } from "../../main";
import { loadStackSettings } from "../../settings/stack-settings";
import { awsProviderVersion, OLDEST_TESTED_AWS_PROVIDER, PINNED_AWS_PROVIDER } from "../../settings/provider-version";
import providerPackage from "@cdktf/provider-aws/package.json";
import { appInvocation } from "../support/app-command";

const ROOT = resolve(__dirname, "../..");
// cdktf writes the binding's source as "aws", CDK Terrain (the converted copy) as "hashicorp/aws".
const SOURCE = expect.stringMatching(/^(hashicorp\/)?aws$/);
// One patch release above the binding's version: newer than any tested.
const ABOVE_PINNED = PINNED_AWS_PROVIDER.replace(/\d+$/, (patch) => String(Number(patch) + 1));

function requiredAws(value: string | undefined): unknown {
  const saved = process.env.CRM_AWS_PROVIDER_VERSION;
  if (value === undefined) delete process.env.CRM_AWS_PROVIDER_VERSION;
  else process.env.CRM_AWS_PROVIDER_VERSION = value;
  try {
    return JSON.parse(
      Testing.synth(new CrmHostStack(Testing.app(), loadStackSettings(resolve(ROOT, "settings/example.json")))),
    ).terraform.required_providers.aws;
  } finally {
    if (saved === undefined) delete process.env.CRM_AWS_PROVIDER_VERSION;
    else process.env.CRM_AWS_PROVIDER_VERSION = saved;
  }
}

describe("CRM_AWS_PROVIDER_VERSION", () => {
  it("unset or empty: the binding's version, exactly", () => {
    expect(PINNED_AWS_PROVIDER).toBe(providerPackage.cdktf.provider.version);
    expect(requiredAws(undefined)).toEqual({ source: SOURCE, version: PINNED_AWS_PROVIDER });
    expect(requiredAws("")).toEqual({ source: SOURCE, version: PINNED_AWS_PROVIDER });
  });

  it("a version of the tested range, both ends and between: required exactly", () => {
    for (const version of [OLDEST_TESTED_AWS_PROVIDER, "6.0.0", PINNED_AWS_PROVIDER]) {
      expect(requiredAws(version)).toEqual({ source: SOURCE, version });
    }
  });

  it.each(["5.99.9", ABOVE_PINNED, "7.0.0", "~> 6.0", ">= 5.100.0", "6.25", "latest", " "])(
    "refuses %j in one line naming it and the range",
    (value) => {
      expect(() => awsProviderVersion(value)).toThrow(
        `CRM_AWS_PROVIDER_VERSION=${JSON.stringify(value)} is not a tested hashicorp/aws version: ` +
          `expected an exact version from ${OLDEST_TESTED_AWS_PROVIDER} to ${PINNED_AWS_PROVIDER} (unset: ${PINNED_AWS_PROVIDER}).`,
      );
    },
  );

  it("main.ts --check (npm run deploy's first step): the one line, exit 1", () => {
    const { file, args } = appInvocation();
    const result = spawnSync(file, [...args, "--check"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, CRM_SETTINGS: "", CRM_AWS_PROVIDER_VERSION: "6.99.0" },
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      `CRM_AWS_PROVIDER_VERSION="6.99.0" is not a tested hashicorp/aws version: expected an exact version from 5.100.0 to ${PINNED_AWS_PROVIDER} (unset: ${PINNED_AWS_PROVIDER}).`,
    );
  }, 60_000);
});
