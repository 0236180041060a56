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
