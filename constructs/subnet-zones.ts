import { DataAwsSubnet } from "@cdktf/provider-aws/lib/data-aws-subnet";
import { ref, TerraformIterator, TerraformLocal, Token } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { PlanCheck } from "./plan-check";

/** What the stack needs to know about each subnet, by subnet id: HCL expressions (without `${}`) of maps. */
export interface SubnetsFacts {
  /** Each subnet's Availability Zone. */
  readonly zones: string;
  /** Each subnet's VPC id. */
  readonly vpcs: string;
  /** Each subnet's IPv4 CIDR block. */
  readonly cidrBlocks: string;
}

/** Props of {@link SubnetZones}. */
export interface SubnetZonesProps {
  /** HCL reference of the list of subnet ids, such as `var.subnet_ids`. */
  readonly subnetIds: string;
  /** The variable that holds them, named in the messages. */
  readonly variableName: string;
  /**
   * Reads the subnets' facts in place of the `aws_subnet` data source: the provider-free engine tests give
   * variables here, and the checks judge them with their own expressions.
   * @default - `data.aws_subnet.<name>`, one per subnet (for_each)
   */
  readonly facts?: (scope: Construct) => SubnetsFacts;
  /**
   * Terraform name of the data source, the locals (`local.<name>_subnet_zones`, …) and the check
   * (`terraform_data.<name>_placement`).
   * @default "crm_hosts"
   */
  readonly name?: string;
}

/**
 * Where the scale-out topology goes, derived from its subnets: their VPC (for the security groups and the
 * target group) and their CIDR blocks (where the load balancer may send traffic). A plan-time check says,
 * naming each subnet and its zone, when they are not in two or more Availability Zones (an Application
 * Load Balancer and an RDS subnet group need two, and one zone's trouble must not stop the app), or
 * when they are in more than one VPC.
 */
export class SubnetZones extends Construct {
  /** The subnets' VPC id (a Terraform expression). */
  public readonly vpcId: string;
  /** The subnets' CIDR blocks (a Terraform expression of a list). */
  public readonly cidrBlocks: string[];
  /** The checks. */
  public readonly check: PlanCheck;

  constructor(scope: Construct, id: string, props: SubnetZonesProps) {
    super(scope, id);
    const name = props.name ?? "crm_hosts";
    const facts = props.facts?.(this) ?? this.readFacts(name, props.subnetIds);
    const local = (what: string, value: string) => {
      const made = new TerraformLocal(this, what, `\${${value}}`);
      nameElements(`${name}_${what}`, made);
      return `local.${name}_${what}`;
    };
    const zones = local("subnet_zones", facts.zones);
    const vpcs = local("subnet_vpcs", facts.vpcs);
    this.vpcId = `\${values(${vpcs})[0]}`;
    this.cidrBlocks = Token.asList(`\${values(${facts.cidrBlocks})}`);
    const listed = (map: string, between: string) =>
      `\${join(", ", [for id, value in ${map} : "\${id}${between}\${value}"])}`;
    this.check = new PlanCheck(this, "check", {
      name: `${name}_placement`,
      input: { subnet_zones_checked: true },
      preconditions: [
        {
          condition: `\${length(distinct(values(${zones}))) >= 2}`,
          errorMessage:
            `Invalid value for variable "${props.variableName}": expected subnets in two or more Availability Zones (the load ` +
            `balancer and the database's subnet group need two, and the app must outlive one zone's trouble); they are ` +
            `${listed(zones, " in ")}.`,
        },
        {
          condition: `\${length(distinct(values(${vpcs}))) == 1}`,
          errorMessage: `Invalid value for variable "${props.variableName}": expected subnets of one VPC; they are ${listed(vpcs, " in ")}.`,
        },
      ],
    });
  }

  private readFacts(name: string, subnetIds: string): SubnetsFacts {
    const each = TerraformIterator.fromList(Token.asList(ref(subnetIds)));
    const subnets = new DataAwsSubnet(this, "subnets", { forEach: each, id: each.value });
    nameElements(name, subnets);
    const map = (attribute: string) => `{for id, subnet in data.aws_subnet.${name} : id => subnet.${attribute}}`;
    return { zones: map("availability_zone"), vpcs: map("vpc_id"), cidrBlocks: map("cidr_block") };
  }
}
