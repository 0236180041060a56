import { DataAwsRoute53Zone } from "@cdktf/provider-aws/lib/data-aws-route53-zone";
import { Route53Record } from "@cdktf/provider-aws/lib/route53-record";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Time to live of the record, in seconds: short enough that a changed address spreads within minutes. */
export const SITE_RECORD_TTL_SECONDS = 300;

/** Props of {@link SiteDomain}. */
export interface SiteDomainProps {
  /** Name of the Route 53 public hosted zone (`example.com`). */
  readonly hostedZone: string;
  /** The site's name, in that zone (`crm.example.com`). */
  readonly recordName: string;
  /** The address the name points at: the host's Elastic IP. */
  readonly address: string;
  /**
   * Terraform name of the zone and the record (`data.aws_route53_zone.<name>`, `aws_route53_record.<name>`).
   * @default "crm_site"
   */
  readonly name?: string;
}

/**
 * The site's name in DNS: an A record in an existing public hosted zone pointing at the host's
 * Elastic IP, so that the name stays with the host through stop/start and replacements. The ACME
 * CA checks the name against it before it issues the certificate (userdata/https.sh).
 */
export class SiteDomain extends Construct {
  public readonly zone: DataAwsRoute53Zone;
  public readonly record: Route53Record;

  constructor(scope: Construct, id: string, props: SiteDomainProps) {
    super(scope, id);
    const name = props.name ?? "crm_site";
    this.zone = new DataAwsRoute53Zone(this, "zone", { name: props.hostedZone, privateZone: false });
    nameElements(name, this.zone);
    this.record = new Route53Record(this, "record", {
      zoneId: this.zone.zoneId,
      name: props.recordName,
      type: "A",
      ttl: SITE_RECORD_TTL_SECONDS,
      records: [props.address],
    });
    nameElements(name, this.record);
  }
}
