import { DataAwsSubnet } from "@cdktf/provider-aws/lib/data-aws-subnet";
import { DataAwsVpc } from "@cdktf/provider-aws/lib/data-aws-vpc";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { PlanCheck } from "./plan-check";

/** What the stack needs to know about the subnet and its VPC: HCL expressions (without `${}`). */
export interface SubnetFacts {
  /** The subnet's VPC id. */
  readonly vpcId: string;
  /** The subnet's availability zone. */
  readonly availabilityZone: string;
  /** Whether that VPC gives instances public DNS hostnames (`enable_dns_hostnames`), a bool. */
  readonly vpcDnsHostnames: string;
}

/** A message's interpolation of an optional variable: Terraform renders every message, also of a check that holds, and refuses null there. */
function given(reference: string): string {
  return `\${coalesce(${reference}, "(unset)")}`;
}

/** Props of {@link SubnetPlacement}. */
export interface SubnetPlacementProps {
  /** HCL reference of the subnet id, such as `var.subnet_id`. */
  readonly subnetId: string;
  /** HCL reference of the VPC id the user gave, null when unset, such as `var.vpc_id`. */
  readonly givenVpcId: string;
  /** HCL reference of the availability zone the user gave, null when unset, such as `var.availability_zone`. */
  readonly givenAvailabilityZone: string;
  /**
   * Reads the subnet's facts in place of the `aws_subnet` and `aws_vpc` data sources: the
   * provider-free engine tests give variables here, and the checks judge them with their own expressions.
   * @default - the data sources
   */
  readonly facts?: (scope: Construct) => SubnetFacts;
  /**
   * Terraform name of the data sources and the check (`data.aws_subnet.<name>`, `data.aws_vpc.<name>`,
   * `terraform_data.<name>_placement`).
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * Where the host goes, derived from its subnet: the VPC of the security group and the zone of the
 * instance and its data volume are the subnet's, so `vpc_id` and `availability_zone` need not be
 * typed (and cannot be typed wrong). When they are given all the same, a plan-time check says which one
 * disagrees with the subnet; another stops a plan in a VPC without DNS hostnames, where the instance
 * gets no public DNS name and the first boot would stop at step 10.
 */
export class SubnetPlacement extends Construct {
  /** The subnet's VPC id (a Terraform expression). */
  public readonly vpcId: string;
  /** The subnet's availability zone (a Terraform expression). */
  public readonly availabilityZone: string;
  /** The checks. */
  public readonly check: PlanCheck;

  constructor(scope: Construct, id: string, props: SubnetPlacementProps) {
    super(scope, id);
    const name = props.name ?? "crm_host";
    const facts = props.facts?.(this) ?? this.readFacts(name, props.subnetId);
    this.vpcId = `\${${facts.vpcId}}`;
    this.availabilityZone = `\${${facts.availabilityZone}}`;
    const subnet = `\${${props.subnetId}}`;
    this.check = new PlanCheck(this, "check", {
      name: `${name}_placement`,
      input: { subnet_placement_checked: true },
      preconditions: [
        {
          condition: `\${${props.givenVpcId} == null || ${props.givenVpcId} == ${facts.vpcId}}`,
          errorMessage:
            `vpc_id ${given(props.givenVpcId)} is not the VPC of subnet_id ${subnet}, which is in ` +
            `${this.vpcId}: leave vpc_id unset (it is taken from the subnet) or set it to ${this.vpcId}.`,
        },
        {
          condition: `\${${props.givenAvailabilityZone} == null || ${props.givenAvailabilityZone} == ${facts.availabilityZone}}`,
          errorMessage:
            `availability_zone ${given(props.givenAvailabilityZone)} is not the zone of subnet_id ${subnet}, which is in ` +
            `${this.availabilityZone}: leave availability_zone unset (it is taken from the subnet) or set it to ${this.availabilityZone}.`,
        },
        {
          condition: `\${${facts.vpcDnsHostnames}}`,
          errorMessage:
            `The VPC ${this.vpcId} of subnet_id ${subnet} has DNS hostnames off (enable_dns_hostnames, ` +
            `"Enable DNS hostnames" in the VPC console): the instance would get no public DNS name, which the first boot ` +
            `reads at step 10. Turn it on: aws ec2 modify-vpc-attribute --vpc-id ${this.vpcId} --enable-dns-hostnames.`,
        },
      ],
    });
  }

  private readFacts(name: string, subnetId: string): SubnetFacts {
    const subnet = new DataAwsSubnet(this, "subnet", { id: `\${${subnetId}}` });
    nameElements(name, subnet);
    const vpc = new DataAwsVpc(this, "vpc", { id: subnet.vpcId });
    nameElements(name, vpc);
    const subnetAddress = `data.aws_subnet.${name}`;
    return {
      vpcId: `${subnetAddress}.vpc_id`,
      availabilityZone: `${subnetAddress}.availability_zone`,
      vpcDnsHostnames: `data.aws_vpc.${name}.enable_dns_hostnames`,
    };
  }
}
