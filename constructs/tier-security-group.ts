import { SecurityGroup, SecurityGroupEgress, SecurityGroupIngress } from "@cdktf/provider-aws/lib/security-group";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { checkEc2Description, inboundRuleQuotaCheck } from "./crm-security-group";
import { InboundRuleNames } from "./constants";

/** One rule of a tier: a TCP port (or every protocol), from or to CIDR blocks or security groups, described. */
export interface TierRule {
  /** The TCP port; undefined: every protocol and port (an egress rule such as "all outbound traffic"). */
  readonly port?: number;
  readonly description: string;
  /** IPv4 CIDR blocks (a list, or a Terraform expression of one such as a variable). */
  readonly cidrBlocks?: string[];
  /** Security group ids: the tier in front of this one (ingress) or behind it (egress). */
  readonly securityGroups?: string[];
}

/** Props of {@link TierSecurityGroup}. */
export interface TierSecurityGroupProps {
  /** ID of the VPC the group belongs to. */
  readonly vpcId: string;
  /** GroupDescription: one line saying who may reach what, in EC2's characters (EC2_DESCRIPTION; checked at synthesis, as every rule's). */
  readonly description: string;
  /** What may come in. */
  readonly ingress: TierRule[];
  /**
   * Where it may go.
   * @default - nowhere (no egress rule: the group answers connections, it opens none)
   */
  readonly egress?: TierRule[];
  /**
   * The account's quota of inbound rules per security group (a number, or a Terraform expression such as a
   * variable): the plan stops before the rules need more (inboundRuleQuotaCheck).
   * @default - no check (the ingress has no CIDR list a user can grow)
   */
  readonly inboundRuleQuota?: number;
  /**
   * What the refusal of too many rules names.
   * @default - "the ingress CIDR lists" and "the quota"
   */
  readonly inboundRuleNames?: InboundRuleNames;
  /** Value of the Name tag. */
  readonly nameTag: string;
  /** Terraform name of the group (`aws_security_group.<name>`). */
  readonly name: string;
}

/**
 * A security group of one tier of the scale-out topology (load balancer, app hosts, database), with
 * inline rules, each described. A tier admits the one in front of it by that tier's security group, so
 * the chain internet → load balancer → hosts → database holds whatever addresses the members get.
 */
export class TierSecurityGroup extends Construct {
  public readonly securityGroup: SecurityGroup;

  constructor(scope: Construct, id: string, props: TierSecurityGroupProps) {
    super(scope, id);
    checkEc2Description(props.description, `security group ${props.name}: description`);
    for (const tier of [...props.ingress, ...(props.egress ?? [])])
      checkEc2Description(tier.description, `security group ${props.name}: rule description`);
    const ingress = props.ingress.map(rule);
    this.securityGroup = new SecurityGroup(this, "group", {
      vpcId: props.vpcId,
      description: props.description,
      ingress,
      egress: (props.egress ?? []).map(rule),
      lifecycle:
        props.inboundRuleQuota === undefined
          ? undefined
          : { precondition: [inboundRuleQuotaCheck(ingress, props.inboundRuleQuota, props.inboundRuleNames)] },
      tags: { Name: props.nameTag },
    });
    nameElements(props.name, this.securityGroup);
  }

  /** The group's id. */
  public get id(): string {
    return this.securityGroup.id;
  }
}

function rule(tier: TierRule): SecurityGroupIngress & SecurityGroupEgress & { fromPort: number } {
  return {
    protocol: tier.port === undefined ? "-1" : "tcp",
    fromPort: tier.port ?? 0,
    toPort: tier.port ?? 0,
    cidrBlocks: tier.cidrBlocks,
    securityGroups: tier.securityGroups,
    description: tier.description,
  };
}
