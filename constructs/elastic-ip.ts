import { Eip } from "@cdktf/provider-aws/lib/eip";
import { EipAssociation } from "@cdktf/provider-aws/lib/eip-association";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Props of {@link ElasticIp}. */
export interface ElasticIpProps {
  /** Value of the Name tag (`<stack_name>/<instance_name>`). */
  readonly nameTag: string;
  /**
   * Terraform name of the address and its association (`aws_eip.<name>`, `aws_eip_association.<name>`).
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * The host's stable public address: an Elastic IP that outlives stop/start and every replacement of
 * the instance (upgrade, restore), so that bookmarks, DNS records and FRONTENDURI keep working.
 *
 * The address is allocated before the instance, whose user data names it (the first boot waits
 * until the metadata service reports it, see userdata/provision.sh), and associated once the
 * instance runs ({@link associateWith}). Until then the instance has its auto-assigned address,
 * which EC2 releases at the association: the first boot's package downloads need a way out.
 */
export class ElasticIp extends Construct {
  public readonly address: Eip;
  private readonly name: string;

  constructor(scope: Construct, id: string, props: ElasticIpProps) {
    super(scope, id);
    this.name = props.name ?? "crm_host";
    this.address = new Eip(this, "address", { domain: "vpc", tags: { Name: props.nameTag } });
    nameElements(this.name, this.address);
  }

  /** Associates the address with the instance (`aws_eip_association.<name>`). */
  public associateWith(instanceId: string): EipAssociation {
    const association = new EipAssociation(this, "association", {
      allocationId: this.address.allocationId,
      instanceId,
    });
    nameElements(this.name, association);
    return association;
  }

  /** The public IPv4 address. */
  public get publicIp(): string {
    return this.address.publicIp;
  }

  /** EC2's public DNS name of the address (`ec2-<a-b-c-d>.compute-1.amazonaws.com`). */
  public get publicDns(): string {
    return this.address.publicDns;
  }
}
