import { DeploymentVariables } from "../constructs/deployment-variables";
import { SecretParameters } from "../constructs/secret-parameters";
import { SecretVariables } from "../constructs/secret-variables";
import { SsmImageParameter } from "../constructs/ssm-image-parameter";
import { StackSettings } from "../settings/stack-settings";

/** What CrmHostStack builds for both topologies first, and the single host or the scale-out topology then takes. */
export interface SharedParts {
  readonly settings: StackSettings;
  /** `<stack_name>/<instance_name>`. */
  readonly nameTag: string;
  readonly inputs: DeploymentVariables;
  readonly secrets: SecretParameters | SecretVariables;
  readonly image: SsmImageParameter;
}

/**
 * The user's tags as an AWS provider's default_tags (it merges them under each resource's own): for every provider of
 * the stack, so that a resource in a second region is tagged as the others. None when the user has no tags.
 */
export function userDefaultTags(
  tags: Readonly<Record<string, string>>,
): { tags: Record<string, string> }[] | undefined {
  return Object.keys(tags).length > 0 ? [{ tags: { ...tags } }] : undefined;
}
