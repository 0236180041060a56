import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { matchesPattern, stackVariable, unsetOr } from "./variable-rules";

/** Props of {@link SubnetVariables}. */
export interface SubnetVariablesProps {
  /**
   * AWS region of the stack: when given, `availability_zone` must be one of its zones.
   * @default - any region's zones are accepted
   */
  readonly region?: string;
}

/** Zone names: a region's zones (us-east-1a), its Local Zones (us-east-1-bos-1a) and Wavelength Zones (us-east-1-wl1-bos-wlz-1). */
const ZONE_SUFFIX = "([a-z]|-[a-z]+-[0-9]+[a-z]|-wl[0-9]+-[a-z]+-wlz-[0-9]+)";
const REGION_PATTERN = "[a-z]{2}(-[a-z]+)+-[0-9]+";

/** Makes a variable optional: `default = null` (cdktf 0.21 fails to synthesize a null default given in the config). */
function optional(variable: TerraformVariable): void {
  variable.addOverride("default", null);
}

/**
 * Where the single host goes: one subnet (`subnet_id`), and the VPC and zone that a user may give
 * besides, which must be the subnet's (constructs/subnet-placement.ts checks them at plan). Each carries
 * a `validation` block whose message names the variable and the expected form.
 */
export class SubnetVariables extends Construct {
  /** `vpc_id`: the VPC of the security group (`<vpc_id>`); optional, the subnet's (constructs/subnet-placement.ts). */
  public readonly vpcId: TerraformVariable;
  /** `subnet_id`: a public subnet of that VPC (`<subnet_id>`). */
  public readonly subnetId: TerraformVariable;
  /** `availability_zone`: the subnet's availability zone (`<availability_zone>`); optional, the subnet's. */
  public readonly availabilityZone: TerraformVariable;

  constructor(scope: Construct, id: string, props: SubnetVariablesProps = {}) {
    super(scope, id);

    this.vpcId = stackVariable(this, "vpc_id", {
      type: "string",
      nullable: true,
      description:
        "ID of the VPC that holds the security group, e.g. vpc-0123456789abcdef0. Optional: the subnet's " +
        "VPC is used; when given, it must be that one.",
    });
    optional(this.vpcId);
    this.vpcId.addValidation(
      unsetOr(
        this.vpcId,
        matchesPattern(
          this.vpcId,
          "^vpc-([0-9a-f]{8}|[0-9a-f]{17})$",
          'a VPC id: "vpc-" followed by 8 or 17 lowercase hexadecimal digits',
        ),
      ),
    );

    this.subnetId = stackVariable(this, "subnet_id", {
      type: "string",
      nullable: false,
      description: "ID of a public subnet of that VPC, in the chosen availability zone, e.g. subnet-0123456789abcdef0.",
    });
    this.subnetId.addValidation(
      matchesPattern(
        this.subnetId,
        "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$",
        'a subnet id: "subnet-" followed by 8 or 17 lowercase hexadecimal digits',
      ),
    );

    this.availabilityZone = stackVariable(this, "availability_zone", {
      type: "string",
      nullable: true,
      description:
        "Availability zone of the subnet and the instance, e.g. us-east-1a; a Local Zone " +
        "(us-east-1-bos-1a) or Wavelength Zone (us-east-1-wl1-bos-wlz-1) also works" +
        (props.region ? `. It must be a zone of the stack's region ${props.region}.` : ".") +
        " Optional: the subnet's zone is used; when given, it must be that one.",
    });
    if (props.region !== undefined && !new RegExp(`^${REGION_PATTERN}$`).test(props.region)) {
      throw new Error(
        `SubnetVariables: region ${JSON.stringify(props.region)} is not a region name such as us-east-1.`,
      );
    }
    const region = props.region ?? REGION_PATTERN;
    optional(this.availabilityZone);
    this.availabilityZone.addValidation(
      unsetOr(
        this.availabilityZone,
        matchesPattern(
          this.availabilityZone,
          `^${region}${ZONE_SUFFIX}$`,
          `an availability zone name such as ${props.region ?? "us-east-1"}a, or a Local Zone or Wavelength Zone name ` +
            `such as ${props.region ?? "us-east-1"}-bos-1a${props.region ? ` (a zone of the stack's region ${props.region})` : ""}`,
        ),
      ),
    );
  }
}
