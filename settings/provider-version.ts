/**
 * The AWS provider version the stacks require. By default exactly the version of the provider
 * binding (@cdktf/provider-aws's hashicorp/aws); `CRM_AWS_PROVIDER_VERSION` sets another within the
 * range the tests prove, for a machine whose Terraform gets providers from a mirror that holds another
 * version. An environment variable, not a setting: what a mirror holds is a property of the machine
 * that deploys, not of a stack (docs/operations.md, Deploying).
 */
import providerPackage from "@cdktf/provider-aws/package.json";
import { SettingsProblem } from "./errors";

/** The environment variable that sets the hashicorp/aws version the stacks require. */
export const AWS_PROVIDER_VERSION_VARIABLE = "CRM_AWS_PROVIDER_VERSION";
/**
 * The oldest hashicorp/aws the engine tests run the stacks through (the filesystem mirror's version on
 * the test machine, __tests__/engine/real-provider.test.ts and readme-deploy.test.ts); the newest is the binding's.
 */
export const OLDEST_TESTED_AWS_PROVIDER = "5.100.0";

/** The hashicorp/aws version the binding was generated from, which its synthesized stacks require exactly. */
export const PINNED_AWS_PROVIDER: string = providerPackage.cdktf.provider.version;

/** `a` compared with `b`, both dotted version numbers: negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((version) => version.split(".").map((part) => Number.parseInt(part, 10) || 0));
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const difference = (x[i] ?? 0) - (y[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * The version to require: `value` (the variable's) when it is an exact X.Y.Z from
 * {@link OLDEST_TESTED_AWS_PROVIDER} to `pinned` (the binding's version), `pinned` when `value` is
 * unset or empty; anything else throws a one-line SettingsProblem naming the value and the range.
 */
export function awsProviderVersion(value: string | undefined, pinned = PINNED_AWS_PROVIDER): string {
  if (value === undefined || value === "") return pinned;
  const version = value.trim();
  if (
    !/^\d+\.\d+\.\d+$/.test(version) ||
    compareVersions(version, OLDEST_TESTED_AWS_PROVIDER) < 0 ||
    compareVersions(version, pinned) > 0
  ) {
    throw new SettingsProblem(
      `${AWS_PROVIDER_VERSION_VARIABLE}=${JSON.stringify(value)} is not a tested hashicorp/aws version: ` +
        `expected an exact version from ${OLDEST_TESTED_AWS_PROVIDER} to ${pinned} (unset: ${pinned}).`,
    );
  }
  return version;
}
