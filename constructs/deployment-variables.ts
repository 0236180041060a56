import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { APP_PORT, HTTP_PORT } from "../settings/ports";
import { DEFAULT_INBOUND_RULE_QUOTA, InboundRuleNames, MAX_INBOUND_RULE_QUOTA } from "./constants";
import { checkLogRetentionDays, DEFAULT_LOG_RETENTION_DAYS, LOG_RETENTION_DAYS } from "./host-log-group";
import { PlanCheck } from "./plan-check";
import { AL2023_KERNEL_6_1_X86_64_PARAMETER } from "./ssm-image-parameter";
import {
  conditionRule,
  distinctIpv4Cidrs,
  ipv4CidrList,
  matchesPattern,
  sshPublicKeyRules,
  stackVariable,
  wholeNumberBetween,
} from "./variable-rules";

/** Props of {@link DeploymentVariables}. */
export interface DeploymentVariablesProps {
  /**
   * Source addresses allowed on port 22 (SSH) when `ssh_ingress_cidrs` is not set.
   * @default ["0.0.0.0/0"] (the original stack opens SSH to every address)
   */
  readonly defaultSshIngressCidrs?: string[];
  /**
   * Source addresses allowed on the application ports 80 and 3000 when `app_ingress_cidrs` is not set.
   * @default ["0.0.0.0/0"]
   */
  readonly defaultAppIngressCidrs?: string[];
  /**
   * Parameter Store path of the hosts' image when `image_parameter` is not set.
   * @default AL2023_KERNEL_6_1_X86_64_PARAMETER
   */
  readonly defaultImageParameter?: string;
  /**
   * Days the hosts' logs are kept when `log_retention_days` is not set, one of LOG_RETENTION_DAYS.
   * @default DEFAULT_LOG_RETENTION_DAYS (365)
   */
  readonly defaultLogRetentionDays?: number;
}

/**
 * The values that differ per AWS account or deployment and that both topologies take (who may log in, who may
 * reach the app, which image the hosts boot, how long their logs are kept), declared as Terraform variables so
 * that one synthesized stack serves any account (`cdktf deploy --var key_pair_name=…`, `TF_VAR_key_pair_name=…`).
 * Where the hosts go is SubnetVariables' (the single host) or ScaleOutVariables' (the scale-out topology's group).
 * Each carries a `validation` block whose message names the variable and the expected form,
 * except the boolean, which Terraform's own type check guards with a message naming it.
 */
export class DeploymentVariables extends Construct {
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
  /** What a security group's refusal of too many inbound rules names: the CIDR lists' variables and the quota's. */
  public readonly inboundRuleNames: InboundRuleNames = {
    cidrs: 'variable "ssh_ingress_cidrs" or "app_ingress_cidrs"',
    quota: "variable inbound_rule_quota",
  };
  /** `detailed_monitoring`: whether the instance has detailed (1-minute) CloudWatch monitoring. */
  public readonly detailedMonitoring: TerraformVariable;
  /** `image_parameter`: Parameter Store path of the AMI id the hosts boot from (SsmImageParameter reads it). */
  public readonly imageParameter: TerraformVariable;
  /** `log_retention_days`: days CloudWatch Logs keeps the hosts' logs (HostLogGroup). */
  public readonly logRetentionDays: TerraformVariable;

  constructor(scope: Construct, id: string, props: DeploymentVariablesProps = {}) {
    super(scope, id);

    this.keyPairName = stackVariable(this, "key_pair_name", {
      type: "string",
      nullable: false,
      description:
        "Name of the EC2 key pair created for SSH access to the instance: 1 to 255 printable ASCII " +
        "characters, not starting or ending with a space.",
    });
    // EC2 trims the name it stores, so " admin" would not be the name given here.
    this.keyPairName.addValidation(
      matchesPattern(
        this.keyPairName,
        "^[!-~]([ -~]{0,253}[!-~])?$",
        "a key pair name of 1 to 255 printable ASCII characters, not starting or ending with a space",
      ),
    );

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
      description:
        "IPv4 CIDR blocks allowed to reach SSH (port 22), each written with its network address " +
        "(10.0.0.0/8, not 10.0.0.1/8). Narrow it to your own addresses where you can.",
    });
    this.sshIngressCidrs.addValidation(ipv4CidrList(this.sshIngressCidrs));
    this.sshIngressCidrs.addValidation(distinctIpv4Cidrs(this.sshIngressCidrs));

    this.appIngressCidrs = stackVariable(this, "app_ingress_cidrs", {
      type: "list(string)",
      nullable: false,
      default: props.defaultAppIngressCidrs ?? ["0.0.0.0/0"],
      description:
        `IPv4 CIDR blocks allowed to reach the front end (port ${HTTP_PORT}) and the back end (port ${APP_PORT}), ` +
        "each written with its network address (10.0.0.0/8, not 10.0.0.1/8).",
    });
    this.appIngressCidrs.addValidation(ipv4CidrList(this.appIngressCidrs));
    this.appIngressCidrs.addValidation(distinctIpv4Cidrs(this.appIngressCidrs));

    this.inboundRuleQuota = stackVariable(this, "inbound_rule_quota", {
      type: "number",
      nullable: false,
      default: DEFAULT_INBOUND_RULE_QUOTA,
      description:
        `The account's quota "Inbound or outbound rules per security group" (Service Quotas, L-0EA8095F): ` +
        `${DEFAULT_INBOUND_RULE_QUOTA} by default; raise it there first. The plan refuses CIDR lists that would need more rules.`,
    });
    this.inboundRuleQuota.addValidation(
      wholeNumberBetween(this.inboundRuleQuota, 1, MAX_INBOUND_RULE_QUOTA, "inbound rules per security group"),
    );

    // Terraform itself refuses anything but true or false, naming the variable.
    this.detailedMonitoring = stackVariable(this, "detailed_monitoring", {
      type: "bool",
      nullable: false,
      default: false,
      description:
        "Detailed (1-minute) CloudWatch monitoring of the instance, billed per metric; basic 5-minute monitoring is free.",
    });

    this.imageParameter = stackVariable(this, "image_parameter", {
      type: "string",
      nullable: false,
      default: props.defaultImageParameter ?? AL2023_KERNEL_6_1_X86_64_PARAMETER,
      description: "Parameter Store path of the AMI id the instance boots from (type AWS::EC2::Image::Id).",
    });
    this.imageParameter.addValidation(
      matchesPattern(
        this.imageParameter,
        "^/[A-Za-z0-9_./-]+$",
        "a Parameter Store path starting with / (letters, digits, _ . - /)",
      ),
    );

    const retention = props.defaultLogRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
    checkLogRetentionDays(retention, "DeploymentVariables: defaultLogRetentionDays");
    this.logRetentionDays = stackVariable(this, "log_retention_days", {
      type: "number",
      nullable: false,
      default: retention,
      description:
        `Days CloudWatch Logs keeps the hosts' logs (${retention} by default), one of the periods it takes: ` +
        `${LOG_RETENTION_DAYS.join(", ")}.`,
    });
    this.logRetentionDays.addValidation(
      conditionRule(
        this.logRetentionDays,
        `contains([${LOG_RETENTION_DAYS.join(", ")}], var.log_retention_days)`,
        `one of ${LOG_RETENTION_DAYS.join(", ")} days (the retention periods CloudWatch Logs takes)`,
      ),
    );
  }

  /**
   * Refuses an `app_ingress_cidrs` without 0.0.0.0/0 (`why`: for whom): for a certificate that a CA validates from
   * the public internet on ports 80 and 443, as Let's Encrypt does, which would otherwise never be issued.
   */
  public requirePublicAppIngress(why: string): void {
    this.appIngressCidrs.addValidation(
      conditionRule(
        this.appIngressCidrs,
        `contains(var.app_ingress_cidrs, "0.0.0.0/0")`,
        `a list holding 0.0.0.0/0 ${why}`,
      ),
    );
  }
}
