import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { DEFAULT_INBOUND_RULE_QUOTA, MAX_INBOUND_RULE_QUOTA } from "./crm-security-group";
import { PlanCheck } from "./plan-check";
import { distinctIpv4Cidrs, ipv4CidrList, matchesPattern, sshPublicKeyRules, stackVariable, unsetOr, wholeNumberBetween } from "./variable-rules";

/** Props of {@link DeploymentVariables}. */
export interface DeploymentVariablesProps {
  /**
   * Source addresses allowed on port 22 (SSH) when `ssh_ingress_cidrs` is not set.
   * @default ["0.0.0.0/0"] (the spec opens SSH to every address)
   */
  readonly defaultSshIngressCidrs?: string[];
  /**
   * Source addresses allowed on the application ports 80 and 3000 when `app_ingress_cidrs` is not set.
   * @default ["0.0.0.0/0"]
   */
  readonly defaultAppIngressCidrs?: string[];
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
 * The values that differ per AWS account, declared as Terraform variables so that one
 * synthesized stack serves any account (`cdktf deploy --var vpc_id=…`, `TF_VAR_vpc_id=…`).
 * Each carries a `validation` block whose message names the variable and the expected form,
 * except the boolean, which Terraform's own type check guards with a message naming it.
 */
export class DeploymentVariables extends Construct {
  /** `vpc_id`: the VPC of the security group (`<vpc_id>`); optional, the subnet's (constructs/subnet-placement.ts). */
  public readonly vpcId: TerraformVariable;
  /** `subnet_id`: a public subnet of that VPC (`<subnet_id>`). */
  public readonly subnetId: TerraformVariable;
  /** `availability_zone`: the subnet's availability zone (`<availability_zone>`); optional, the subnet's. */
  public readonly availabilityZone: TerraformVariable;
  /** `key_pair_name`: name of the EC2 key pair (`<key_pair_name>`). */
  public readonly keyPairName: TerraformVariable;
  /** `ssh_public_key`: public key material of that key pair (OpenSSH format). */
  public readonly sshPublicKey: TerraformVariable;
  /** `terraform_data.ssh_public_key`: the key's checks, preconditions (a validation would print a private key pasted by mistake). */
  public readonly sshPublicKeyChecks: PlanCheck;
  /** `ssh_ingress_cidrs`: IPv4 CIDR blocks allowed on port 22. */
  public readonly sshIngressCidrs: TerraformVariable;
  /** `app_ingress_cidrs`: IPv4 CIDR blocks allowed on ports 80 and 3000. */
  public readonly appIngressCidrs: TerraformVariable;
  /** `inbound_rule_quota`: the account's quota of inbound rules per security group. */
  public readonly inboundRuleQuota: TerraformVariable;
  /** `detailed_monitoring`: whether the instance has detailed (1-minute) CloudWatch monitoring. */
  public readonly detailedMonitoring: TerraformVariable;

  constructor(scope: Construct, id: string, props: DeploymentVariablesProps = {}) {
    super(scope, id);

    this.vpcId = stackVariable(this, "vpc_id", {
      type: "string",
      nullable: true,
      description: "ID of the VPC that holds the security group, e.g. vpc-0123456789abcdef0. Optional: the subnet's " +
        "VPC is used; when given, it must be that one.",
    });
    optional(this.vpcId);
    this.vpcId.addValidation(unsetOr(this.vpcId, matchesPattern(this.vpcId, "^vpc-([0-9a-f]{8}|[0-9a-f]{17})$",
      'a VPC id: "vpc-" followed by 8 or 17 lowercase hexadecimal digits')));

    this.subnetId = stackVariable(this, "subnet_id", {
      type: "string",
      nullable: false,
      description: "ID of a public subnet of that VPC, in the chosen availability zone, e.g. subnet-0123456789abcdef0.",
    });
    this.subnetId.addValidation(matchesPattern(this.subnetId, "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$",
      'a subnet id: "subnet-" followed by 8 or 17 lowercase hexadecimal digits'));

    this.availabilityZone = stackVariable(this, "availability_zone", {
      type: "string",
      nullable: true,
      description: "Availability zone of the subnet and the instance, e.g. us-east-1a; a Local Zone " +
        "(us-east-1-bos-1a) or Wavelength Zone (us-east-1-wl1-bos-wlz-1) also works" +
        (props.region ? `. It must be a zone of the stack's region ${props.region}.` : ".") +
        " Optional: the subnet's zone is used; when given, it must be that one.",
    });
    if (props.region !== undefined && !new RegExp(`^${REGION_PATTERN}$`).test(props.region)) {
      throw new Error(`DeploymentVariables: region ${JSON.stringify(props.region)} is not a region name such as us-east-1.`);
    }
    const region = props.region ?? REGION_PATTERN;
    optional(this.availabilityZone);
    this.availabilityZone.addValidation(unsetOr(this.availabilityZone, matchesPattern(this.availabilityZone, `^${region}${ZONE_SUFFIX}$`,
      `an availability zone name such as ${props.region ?? "us-east-1"}a, or a Local Zone or Wavelength Zone name ` +
      `such as ${props.region ?? "us-east-1"}-bos-1a${props.region ? ` (a zone of the stack's region ${props.region})` : ""}`)));

    this.keyPairName = stackVariable(this, "key_pair_name", {
      type: "string",
      nullable: false,
      description: "Name of the EC2 key pair created for SSH access to the instance: 1 to 255 printable ASCII " +
        "characters, not starting or ending with a space.",
    });
    // EC2 trims the name it stores, so " admin" would not be the name given here.
    this.keyPairName.addValidation(matchesPattern(this.keyPairName, "^[!-~]([ -~]{0,253}[!-~])?$",
      "a key pair name of 1 to 255 printable ASCII characters, not starting or ending with a space"));

    // Sensitive although a public key is public: a failed check prints the values of the variables it
    // reads unless they are sensitive, and a private key pasted here by mistake must not reach a log.
    this.sshPublicKey = stackVariable(this, "ssh_public_key", {
      type: "string",
      sensitive: true,
      nullable: false,
      description:
        "Public key material of the key pair (OpenSSH format, e.g. the contents of ~/.ssh/id_ed25519.pub): an " +
        "ssh-ed25519 or ssh-rsa key, the two types EC2 imports (not ECDSA). " +
        "The private key stays with you: Terraform never generates or stores one.",
    });
    this.sshPublicKeyChecks = new PlanCheck(this, "ssh_public_key_checks", {
      name: "ssh_public_key",
      preconditions: sshPublicKeyRules(this.sshPublicKey),
    });

    this.sshIngressCidrs = stackVariable(this, "ssh_ingress_cidrs", {
      type: "list(string)",
      nullable: false,
      default: props.defaultSshIngressCidrs ?? ["0.0.0.0/0"],
      description: "IPv4 CIDR blocks allowed to reach SSH (port 22), each written with its network address " +
        "(10.0.0.0/8, not 10.0.0.1/8). Narrow it to your own addresses where you can.",
    });
    this.sshIngressCidrs.addValidation(ipv4CidrList(this.sshIngressCidrs));
    this.sshIngressCidrs.addValidation(distinctIpv4Cidrs(this.sshIngressCidrs));

    this.appIngressCidrs = stackVariable(this, "app_ingress_cidrs", {
      type: "list(string)",
      nullable: false,
      default: props.defaultAppIngressCidrs ?? ["0.0.0.0/0"],
      description: "IPv4 CIDR blocks allowed to reach the front end (port 80) and the back end (port 3000), " +
        "each written with its network address (10.0.0.0/8, not 10.0.0.1/8).",
    });
    this.appIngressCidrs.addValidation(ipv4CidrList(this.appIngressCidrs));
    this.appIngressCidrs.addValidation(distinctIpv4Cidrs(this.appIngressCidrs));

    this.inboundRuleQuota = stackVariable(this, "inbound_rule_quota", {
      type: "number",
      nullable: false,
      default: DEFAULT_INBOUND_RULE_QUOTA,
      description: `The account's quota "Inbound or outbound rules per security group" (Service Quotas, L-0EA8095F): ` +
        `${DEFAULT_INBOUND_RULE_QUOTA} by default; raise it there first. The plan refuses CIDR lists that would need more rules.`,
    });
    this.inboundRuleQuota.addValidation(wholeNumberBetween(this.inboundRuleQuota, 1, MAX_INBOUND_RULE_QUOTA, "inbound rules per security group"));

    // Terraform itself refuses anything but true or false, naming the variable.
    this.detailedMonitoring = stackVariable(this, "detailed_monitoring", {
      type: "bool",
      nullable: false,
      default: false,
      description:
        "Detailed (1-minute) CloudWatch monitoring of the instance, billed per metric; basic 5-minute monitoring is free.",
    });
  }
}
