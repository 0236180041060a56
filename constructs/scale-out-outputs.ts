import { TerraformOutput } from "cdktf";
import { Construct } from "constructs";
import { applicationUris } from "../userdata/script";
import { APP_PORT, HTTP_PORT } from "../settings/ports";
import { namedOutputs } from "./host-outputs";

/** Props of {@link ScaleOutOutputs}. */
export interface ScaleOutOutputsProps {
  /** `<instance_name>`: every output is named `<instance_name><What>`, as HostOutputs' are. */
  readonly instanceName: string;
  /** `<stack_name>/<instance_name>`, for the descriptions. */
  readonly nameTag: string;
  /** The load balancer's DNS name (a Terraform expression). */
  readonly loadBalancerDns: string;
  /**
   * The site's name, for a stack with a domain: the front end's URL is then `https://<name>`, the back end's `http://<name>:3000`.
   * @default - the URLs are on the load balancer's DNS name
   */
  readonly domainName?: string;
  /** The database's endpoint (`<address>:<port>`) and the ARN of its master secret (Terraform expressions). */
  readonly databaseEndpoint: string;
  readonly databaseSecretArn: string;
  /** The Auto Scaling group's name (a Terraform expression). */
  readonly autoScalingGroupName: string;
}

/**
 * What an operator needs after a deploy of the scale-out topology, as Terraform outputs named as the single
 * host's are (`<instance_name>FrontendUrl`, `…BackendUrl`): the load balancer's DNS name (where a CNAME or
 * alias of your own points), the app's URLs (FRONTENDURI and BACKENDURI), the database's endpoint and the
 * ARN of the secret in which RDS keeps its master user's password, and the Auto Scaling group's name (for
 * `aws autoscaling describe-instance-refreshes`). There is no single public IP: the original stack's
 * `<instance_name>PublicIP` belongs to the single host.
 */
export class ScaleOutOutputs extends Construct {
  /** The outputs by name. */
  public readonly outputs: Readonly<Record<string, TerraformOutput>>;

  constructor(scope: Construct, id: string, props: ScaleOutOutputsProps) {
    super(scope, id);
    const uris = applicationUris(props.loadBalancerDns, props.domainName);
    this.outputs = namedOutputs(this, props.instanceName, [
      ["LoadBalancerDns", props.loadBalancerDns, `DNS name of the load balancer of ${props.nameTag}`],
      [
        "FrontendUrl",
        uris.frontend,
        `The application's front end (${props.domainName ? "HTTPS" : `port ${HTTP_PORT}`}, FRONTENDURI)`,
      ],
      ["BackendUrl", uris.backend, `The application's back end (port ${APP_PORT}, BACKENDURI)`],
      [
        "DatabaseEndpoint",
        props.databaseEndpoint,
        `Endpoint (host:port) of the RDS for MariaDB database of ${props.nameTag}, reachable from its hosts only`,
      ],
      [
        "DatabaseSecretArn",
        props.databaseSecretArn,
        "Secrets Manager secret in which RDS keeps the database's master user name and password",
      ],
      [
        "AutoScalingGroupName",
        props.autoScalingGroupName,
        `Auto Scaling group of the hosts of ${props.nameTag} (its instance refreshes roll out releases)`,
      ],
    ]);
  }
}
