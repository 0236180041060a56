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
  /**
   * The address the name points at: the host's Elastic IP.
   * @default - no record yet: {@link aliasTo} makes one (a load balancer's name)
   */
  readonly address?: string;
  /**
   * Terraform name of the zone and the record (`data.aws_route53_zone.<name>`, `aws_route53_record.<name>`).
   * @default "crm_site"
   */
  readonly name?: string;
}

/**
 * The site's name in DNS: an A record in an existing public hosted zone pointing at the host's
 * Elastic IP, so that the name stays with the host through stop/start and replacements. The ACME
 * CA checks the name against it before it issues the certificate (userdata/front.sh). In the
 * scale-out topology, an alias A record to the load balancer instead ({@link aliasTo}). Either record
 * takes over an existing one of the same name (`allow_overwrite`: Route 53's UPSERT, where CREATE fails).
 */
export class SiteDomain extends Construct {
  public readonly zone: DataAwsRoute53Zone;
  public record?: Route53Record;
  private readonly name: string;
  private readonly recordName: string;

  constructor(scope: Construct, id: string, props: SiteDomainProps) {
    super(scope, id);
    const name = props.name ?? "crm_site";
    this.name = name;
    this.recordName = props.recordName;
    this.zone = new DataAwsRoute53Zone(this, "zone", { name: props.hostedZone, privateZone: false });
    nameElements(name, this.zone);
    if (props.address === undefined) return;
    this.record = new Route53Record(this, "record", {
      zoneId: this.zone.zoneId,
      name: props.recordName,
      type: "A",
      ttl: SITE_RECORD_TTL_SECONDS,
      records: [props.address],
      // The name may be taken already: by a record made by hand, or by the stack the site moves from.
      allowOverwrite: true,
    });
    nameElements(name, this.record);
  }

  /**
   * Points the name at a load balancer: an alias A record (`aws_route53_record.<name>`), which follows the
   * load balancer's addresses and answers only while it has a healthy host (evaluate_target_health).
   */
  public aliasTo(dnsName: string, zoneId: string): Route53Record {
    if (this.record) throw new Error(`${this.node.path} already points at an address`);
    this.record = new Route53Record(this, "record", {
      zoneId: this.zone.zoneId,
      name: this.recordName,
      type: "A",
      alias: { name: dnsName, zoneId, evaluateTargetHealth: true },
      // The single host's record, when the site moves here from it (docs/scale-out.md).
      allowOverwrite: true,
    });
    nameElements(this.name, this.record);
    return this.record;
  }
}
