import { SecurityGroup } from "@cdktf/provider-aws/lib/security-group";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Ports of spec 2.2 / 8, with the description each ingress rule carries. */
export const SSH_PORT = { port: 22, description: "SSH" } as const;
export const BACK_END_PORT = { port: 3000, description: "application back end" } as const;
export const HTTP_PORT = { port: 80, description: "HTTP" } as const;
/** Opened only for a stack with a domain, to the same sources as 80 and 3000. */
export const HTTPS_PORT = { port: 443, description: "HTTPS" } as const;

/** Props of {@link CrmSecurityGroup}. */
export interface CrmSecurityGroupProps {
  /** ID of the VPC the group belongs to (`<vpc_id>`). */
  readonly vpcId: string;
  /**
   * IPv4 CIDR blocks allowed on port 22.
   * @default ["0.0.0.0/0"]
   */
  readonly sshIngressCidrs?: string[];
  /**
   * IPv4 CIDR blocks allowed on ports 80 and 3000.
   * @default ["0.0.0.0/0"]
   */
  readonly appIngressCidrs?: string[];
  /**
   * Whether to open port 443 (HTTPS) to `appIngressCidrs` too: for a stack with a domain.
   * @default false
   */
  readonly https?: boolean;
  /**
   * GroupDescription: one line naming SSH and HTTP access.
   * @default "Allow SSH (22) and HTTP (80, 3000) access to the CRM host"
   */
  readonly description?: string;
  /**
   * Tags of the group.
   * @default - none
   */
  readonly tags?: Record<string, string>;
  /**
   * Terraform name of the group (`aws_security_group.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * The firewall of spec 2.2: tcp 22 (SSH), 3000 (application back end) and 80 (HTTP) in, all
 * traffic out, every rule described. Ingress sources default to every address, as in the spec.
 * With `https`, tcp 443 too, after the spec's rules.
 */
export class CrmSecurityGroup extends Construct {
  public readonly securityGroup: SecurityGroup;

  constructor(scope: Construct, id: string, props: CrmSecurityGroupProps) {
    super(scope, id);
    const ssh = props.sshIngressCidrs ?? ["0.0.0.0/0"];
    const app = props.appIngressCidrs ?? ["0.0.0.0/0"];
    const tcp = (rule: { port: number; description: string }, cidrBlocks: string[]) => ({
      protocol: "tcp",
      fromPort: rule.port,
      toPort: rule.port,
      cidrBlocks,
      description: rule.description,
    });
    this.securityGroup = new SecurityGroup(this, "group", {
      vpcId: props.vpcId,
      description: props.description ?? "Allow SSH (22) and HTTP (80, 3000) access to the CRM host",
      ingress: [tcp(SSH_PORT, ssh), tcp(BACK_END_PORT, app), tcp(HTTP_PORT, app), ...(props.https ? [tcp(HTTPS_PORT, app)] : [])],
      egress: [{ protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: ["0.0.0.0/0"], description: "all outbound traffic" }],
      tags: props.tags,
    });
    nameElements(props.name ?? "crm_host", this.securityGroup);
  }

  /** The group's id, for the instance's `vpc_security_group_ids`. */
  public get id(): string {
    return this.securityGroup.id;
  }
}
