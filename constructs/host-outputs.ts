import { TerraformOutput } from "cdktf";
import { Construct } from "constructs";
import { APP_PORT, HTTP_PORT } from "../settings/ports";
import { applicationUris } from "../userdata/script";

/** Props of {@link HostOutputs}. */
export interface HostOutputsProps {
  /** `<instance_name>`: every output is named `<instance_name><What>`, as the original's `<instance_name>PublicIP`. */
  readonly instanceName: string;
  /** `<stack_name>/<instance_name>`, for the descriptions. */
  readonly nameTag: string;
  /** The instance's id, public IP address and public DNS name (Terraform expressions): the Elastic IP's. */
  readonly instanceId: string;
  readonly publicIp: string;
  readonly publicDns: string;
  /** The login user of the image (`ec2-user` on Amazon Linux). */
  readonly loginUser: string;
  /** The provisioning script's log file on the host. */
  readonly provisioningLog: string;
  /**
   * Id of the EBS volume that holds the database (for snapshots and restores by hand).
   * @default - no `<instance_name>DataVolumeId` output
   */
  readonly dataVolumeId?: string;
  /**
   * The site's name, for a stack with a domain: the front end's URL is then `https://<name>`, the
   * back end's `http://<name>:3000`, as FRONTENDURI and BACKENDURI.
   * @default - the URLs are on the public DNS name
   */
  readonly domainName?: string;
}

/**
 * What an operator needs after a deploy, as Terraform outputs (`cdktf output`, `terraform output`):
 * the original stack's `<instance_name>PublicIP`, and the host's DNS name, id, the application's addresses
 * and the commands to log in and to follow the first boot. The output names are fixed (not
 * prefixed by the construct path), so that scripts can rely on them.
 */
export class HostOutputs extends Construct {
  /** The outputs by name. */
  public readonly outputs: Readonly<Record<string, TerraformOutput>>;

  constructor(scope: Construct, id: string, props: HostOutputsProps) {
    super(scope, id);
    const login = `${props.loginUser}@${props.publicDns}`;
    const uris = applicationUris(props.publicDns, props.domainName);
    const values: [string, string, string][] = [
      ["PublicIP", props.publicIp, `Public IP address of ${props.nameTag}`],
      ["PublicDns", props.publicDns, `Public DNS name of ${props.nameTag}`],
      ["InstanceId", props.instanceId, `EC2 instance id of ${props.nameTag}`],
      [
        "FrontendUrl",
        uris.frontend,
        `The application's front end (${props.domainName ? "HTTPS" : `port ${HTTP_PORT}`}, FRONTENDURI)`,
      ],
      ["BackendUrl", uris.backend, `The application's back end (port ${APP_PORT}, BACKENDURI)`],
      ["SshCommand", `ssh ${login}`, "Log in to the host (add -i with the private key of key_pair_name)"],
      [
        "ProvisioningLogCommand",
        `ssh ${login} sudo tail -n +1 -f ${props.provisioningLog}`,
        "Follow the first-boot provisioning log (it ends with the last step's line)",
      ],
    ];
    if (props.dataVolumeId !== undefined) {
      values.push([
        "DataVolumeId",
        props.dataVolumeId,
        `EBS volume that holds the database of ${props.nameTag} (kept on destroy)`,
      ]);
    }
    this.outputs = namedOutputs(this, props.instanceName, values);
  }
}

/**
 * Outputs named `<instanceName><suffix>` (not prefixed by the construct path, so that scripts can rely on
 * them), from `[suffix, value, description]`; the outputs by name.
 */
export function namedOutputs(
  scope: Construct,
  instanceName: string,
  values: readonly (readonly [string, string, string])[],
): Record<string, TerraformOutput> {
  const outputs: Record<string, TerraformOutput> = {};
  for (const [suffix, value, description] of values) {
    const name = `${instanceName}${suffix}`;
    const output = new TerraformOutput(scope, suffix, { value, description });
    output.overrideLogicalId(name);
    outputs[name] = output;
  }
  return outputs;
}
