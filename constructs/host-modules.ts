import { DataAwsIamPolicyDocument } from "@cdktf/provider-aws/lib/data-aws-iam-policy-document";
import { IamRolePolicy } from "@cdktf/provider-aws/lib/iam-role-policy";
import { SsmParameter } from "@cdktf/provider-aws/lib/ssm-parameter";
import { Construct } from "constructs";
import { hostModules } from "../userdata";
import { ProvisioningSettings } from "../settings/provisioning-settings";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";

/** What a Standard parameter holds at most (characters of its value). */
export const STANDARD_PARAMETER_LIMIT = 4096;

/** Where a stack's modules are: `/<stackName>/crm/modules` (each `…/<module>`), beside its secrets' `/<stackName>/crm/…`. */
export function moduleParameterPath(stackName: string): string {
  return awsName("ssmParameterName", `/${stackName}/crm/modules`, "stackName");
}

/** Props of {@link HostModules}. */
export interface HostModulesProps {
  /** The script's settings: which modules the first boot runs (userdata/script.ts, hostModules). */
  readonly settings: ProvisioningSettings;
  /** Where the parameters are: `<path>/<module>` (moduleParameterPath); the user data's `modulePath`. */
  readonly path: string;
  /**
   * Name of the role that may read them (the instance role): a role policy allows `ssm:GetParameters` on them and
   * nothing else.
   * @default - no policy (the boot test's moto, which asks no one)
   */
  readonly roleName?: string;
  /**
   * Terraform name of the parameters' stem (`aws_ssm_parameter.<name>_<module>`) and of the policy.
   * @default "crm_host_modules"
   */
  readonly name?: string;
}

/**
 * The first boot's modules in Parameter Store (userdata/script.ts, hostModules): what leaves the user data room
 * under EC2's 16 KiB. One Standard parameter (String, free, up to 4 KB) per module, its functions gzip-compressed
 * in base64; the user data names each one's sha256, and the host keeps what it read by that sha256 (provision.sh,
 * load_modules), so a later deploy's parameters never change what an older host runs again. The instance must be
 * created after them: give it `dependables`.
 */
export class HostModules extends Construct {
  /** Where the parameters are (ProvisioningUserData's `modulePath`). */
  public readonly path: string;
  /** The parameters, by module. */
  public readonly parameters: Readonly<Record<string, SsmParameter>>;
  /** The role policy (with `roleName`). */
  public readonly policy?: IamRolePolicy;
  /** What the instances depend on: the parameters, and the policy that lets them read them. */
  public readonly dependables: (SsmParameter | IamRolePolicy)[];

  constructor(scope: Construct, id: string, props: HostModulesProps) {
    super(scope, id);
    const name = props.name ?? "crm_host_modules";
    this.path = props.path;
    const parameters: Record<string, SsmParameter> = {};
    for (const module of hostModules(props.settings)) {
      if (module.value.length > STANDARD_PARAMETER_LIMIT) {
        throw new Error(
          `The module ${module.module} takes ${module.value.length} characters, over a Standard parameter's ${STANDARD_PARAMETER_LIMIT}: split it (userdata/${module.module}.sh).`,
        );
      }
      const parameter = new SsmParameter(this, module.module, {
        name: `${props.path}/${module.module}`,
        type: "String",
        tier: "Standard",
        value: module.value,
        description: `userdata/${module.module}.sh of the first boot, gzip in base64 (sha256 ${module.sha256.slice(0, 12)})`,
      });
      nameElements(`${name}_${module.module.replace(/-/g, "_")}`, parameter);
      parameters[module.module] = parameter;
    }
    this.parameters = parameters;
    if (props.roleName !== undefined) {
      const document = new DataAwsIamPolicyDocument(this, "document", {
        statement: [
          {
            sid: "ReadTheModules",
            effect: "Allow",
            actions: ["ssm:GetParameters"],
            resources: Object.values(parameters).map((parameter) => parameter.arn),
          },
        ],
      });
      nameElements(name, document);
      this.policy = new IamRolePolicy(this, "policy", {
        name: "read-crm-host-modules",
        role: props.roleName,
        policy: document.json,
      });
      nameElements(name, this.policy);
    }
    this.dependables = [...Object.values(parameters), ...(this.policy ? [this.policy] : [])];
  }
}
