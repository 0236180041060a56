import { AcmCertificate } from "@cdktf/provider-aws/lib/acm-certificate";
import { AcmCertificateValidation } from "@cdktf/provider-aws/lib/acm-certificate-validation";
import { Route53Record } from "@cdktf/provider-aws/lib/route53-record";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Time to live of the validation record, in seconds (ACM checks it again at each renewal). */
export const VALIDATION_RECORD_TTL_SECONDS = 60;

/** Props of {@link SiteCertificate}. */
export interface SiteCertificateProps {
  /** The site's name, the certificate's one domain name (`crm.example.com`). */
  readonly domainName: string;
  /** The Route 53 public hosted zone of that name (SiteDomain's zone), where the validation record goes. */
  readonly zoneId: string;
  /** Value of the Name tag. */
  readonly nameTag: string;
  /**
   * Terraform name of the certificate and its validation (`aws_acm_certificate.<name>`, `aws_acm_certificate_validation.<name>`);
   * the validation record is `aws_route53_record.<name>_validation`.
   * @default "crm_site"
   */
  readonly name?: string;
}

/**
 * The scale-out topology's TLS certificate: from AWS Certificate Manager for the site's name, validated
 * through a DNS record that Terraform writes in the hosted zone (ACM renews it by itself while the record
 * stays), made before the old one goes when the name changes. Its `arn` is the validated certificate's: a
 * listener that uses it waits for the validation.
 */
export class SiteCertificate extends Construct {
  public readonly certificate: AcmCertificate;
  public readonly validationRecord: Route53Record;
  public readonly validation: AcmCertificateValidation;

  constructor(scope: Construct, id: string, props: SiteCertificateProps) {
    super(scope, id);
    const name = props.name ?? "crm_site";
    this.certificate = new AcmCertificate(this, "certificate", {
      domainName: props.domainName,
      validationMethod: "DNS",
      tags: { Name: props.nameTag },
      lifecycle: { createBeforeDestroy: true },
    });
    nameElements(name, this.certificate);
    // One name, so one validation option; a set in the provider, hence tolist().
    const option = (attribute: string) =>
      `\${tolist(aws_acm_certificate.${name}.domain_validation_options)[0].${attribute}}`;
    this.validationRecord = new Route53Record(this, "validation_record", {
      zoneId: props.zoneId,
      name: option("resource_record_name"),
      type: option("resource_record_type"),
      records: [option("resource_record_value")],
      ttl: VALIDATION_RECORD_TTL_SECONDS,
      allowOverwrite: true,
    });
    nameElements(`${name}_validation`, this.validationRecord);
    this.validation = new AcmCertificateValidation(this, "validation", {
      certificateArn: this.certificate.arn,
      validationRecordFqdns: [this.validationRecord.fqdn],
    });
    nameElements(name, this.validation);
  }

  /** The certificate's ARN once it is validated. */
  public get arn(): string {
    return this.validation.certificateArn;
  }
}
