import { SecurityGroup } from "@cdktf/provider-aws/lib/security-group";
import { Fn, Op, Precondition, Token } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import {
  BACK_END_RULE,
  DEFAULT_INBOUND_RULE_QUOTA,
  HTTP_RULE,
  HTTPS_RULE,
  InboundRuleNames,
  MAX_INBOUND_RULE_QUOTA,
  SSH_RULE,
} from "./constants";

/**
 * The precondition of a security group that stops the plan before its inbound rules exceed the account's
 * quota `quota` (a number or a Terraform expression; default DEFAULT_INBOUND_RULE_QUOTA). AWS counts one
 * rule per CIDR block of each rule, and one per source security group.
 */
export function inboundRuleQuotaCheck(
  ingress: readonly { readonly fromPort: number; readonly cidrBlocks?: string[]; readonly securityGroups?: string[] }[],
  quota: number = DEFAULT_INBOUND_RULE_QUOTA,
  names: InboundRuleNames = { cidrs: "the ingress CIDR lists", quota: "the quota" },
): Precondition {
  const counts = ingress.map((rule) =>
    rule.cidrBlocks ? Fn.lengthOf(rule.cidrBlocks) : (rule.securityGroups ?? []).length,
  );
  const rules = counts.reduce((sum, count) => Op.add(sum, count));
  return {
    condition: Op.lte(rules, quota),
    errorMessage:
      `Invalid value for ${names.cidrs}: expected at most ${Token.asString(quota)} inbound rules, AWS's quota ` +
      `"Inbound or outbound rules per security group" (${names.quota}: ${DEFAULT_INBOUND_RULE_QUOTA} by default, ${MAX_INBOUND_RULE_QUOTA.toLocaleString("en-US")} at most in any account; raise it in ` +
      `Service Quotas first); the lists make ${Token.asString(rules)}, one per CIDR block and port (${ingress
        .map((rule, index) => `${rule.fromPort}: ${Token.asString(counts[index])}`)
        .join(", ")}).`,
  };
}

/**
 * The characters EC2 allows in a security group's description and in a rule's (CreateSecurityGroup's
 * GroupDescription, IpRange and UserIdGroupPair Description): a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*, at most 255.
 * The AWS provider refuses any other in a rule at plan time, and EC2 refuses it in a group at apply time.
 */
export const EC2_DESCRIPTION = /^[0-9A-Za-z_ .:/()#,@[\]+=&;{}!$*-]{0,255}$/;

/** Throws a one-line error naming `value` when it is not a description EC2 accepts (see EC2_DESCRIPTION); `what` says whose. */
export function checkEc2Description(value: string | undefined, what: string): void {
  if (value === undefined || Token.isUnresolved(value) || EC2_DESCRIPTION.test(value)) return;
  const bad = [...new Set(value.replace(/[0-9A-Za-z_ .:/()#,@[\]+=&;{}!$*-]/g, ""))].join("");
  throw new Error(
    `${what} "${value}": EC2 allows only a-zA-Z0-9. _-:/()#,@[]+=&;{}!$* (at most 255), ` +
      (bad ? `not ${JSON.stringify(bad)}` : `not ${value.length} characters`),
  );
}

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
   * Most inbound rules the group may hold: the account's quota "Inbound or outbound rules per security
   * group" (a number, or a Terraform expression such as a variable). AWS counts one rule per CIDR block
   * and port; the plan stops before a list that would need more.
   * @default DEFAULT_INBOUND_RULE_QUOTA (60, AWS's default quota)
   */
  readonly inboundRuleQuota?: number;
  /**
   * What the refusal of too many rules names: the variables of the CIDR lists, and of the quota.
   * @default - "the ingress CIDR lists" and "the quota"
   */
  readonly inboundRuleNames?: InboundRuleNames;
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
 * The firewall of docs/original-stack.md §2.2: tcp 22 (SSH), 3000 (application back end) and 80 (HTTP) in, all
 * traffic out, every rule described. Ingress sources default to every address, as in the original stack.
 * With `https`, tcp 443 too, after the original stack's rules.
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
    const ingress = [
      tcp(SSH_RULE, ssh),
      tcp(BACK_END_RULE, app),
      tcp(HTTP_RULE, app),
      ...(props.https ? [tcp(HTTPS_RULE, app)] : []),
    ];
    const egress = [
      { protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: ["0.0.0.0/0"], description: "all outbound traffic" },
    ];
    const description =
      props.description ??
      `Allow SSH (${SSH_RULE.port}) and HTTP (${HTTP_RULE.port}, ${BACK_END_RULE.port}) access to the CRM host`;
    checkEc2Description(description, `security group ${props.name ?? "crm_host"}: description`);
    for (const rule of [...ingress, ...egress])
      checkEc2Description(rule.description, `security group ${props.name ?? "crm_host"}: rule description`);
    this.securityGroup = new SecurityGroup(this, "group", {
      vpcId: props.vpcId,
      description,
      ingress,
      lifecycle: { precondition: [inboundRuleQuotaCheck(ingress, props.inboundRuleQuota, props.inboundRuleNames)] },
      egress,
      tags: props.tags,
    });
    nameElements(props.name ?? "crm_host", this.securityGroup);
  }

  /** The group's id, for the instance's `vpc_security_group_ids`. */
  public get id(): string {
    return this.securityGroup.id;
  }
}
