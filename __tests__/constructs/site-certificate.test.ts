import { TerraformOutput } from "cdktf";
import { SiteCertificate, VALIDATION_RECORD_TTL_SECONDS } from "../../constructs/site-certificate";
import { only, synthesize } from "../support/synth";

describe("SiteCertificate", () => {
  const { json } = synthesize((scope) => {
    const certificate = new SiteCertificate(scope, "certificate", {
      domainName: "crm.example.com",
      zoneId: "Z123",
      nameTag: "S/W",
    });
    new TerraformOutput(scope, "arn", { value: certificate.arn });
  });

  it("asks ACM for a DNS-validated certificate of the site's name, made before the old one goes", () => {
    expect(json.resource?.aws_acm_certificate).toEqual({
      crm_site: {
        domain_name: "crm.example.com",
        validation_method: "DNS",
        tags: { Name: "S/W" },
        lifecycle: { create_before_destroy: true },
      },
    });
  });

  it("writes ACM's validation record in the hosted zone, and waits for the validation", () => {
    const option = (attribute: string) =>
      `\${tolist(aws_acm_certificate.crm_site.domain_validation_options)[0].${attribute}}`;
    expect(json.resource?.aws_route53_record).toEqual({
      crm_site_validation: {
        zone_id: "Z123",
        name: option("resource_record_name"),
        type: option("resource_record_type"),
        records: [option("resource_record_value")],
        ttl: VALIDATION_RECORD_TTL_SECONDS,
        allow_overwrite: true,
      },
    });
    expect(only(json.resource, "aws_acm_certificate_validation")).toEqual({
      certificate_arn: "${aws_acm_certificate.crm_site.arn}",
      validation_record_fqdns: ["${aws_route53_record.crm_site_validation.fqdn}"],
    });
  });

  it("gives the validated certificate's ARN, so that a listener using it waits for the validation", () => {
    expect(json.output?.arn.value).toBe("${aws_acm_certificate_validation.crm_site.certificate_arn}");
  });
});
