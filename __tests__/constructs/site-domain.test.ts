import { SITE_RECORD_TTL_SECONDS, SiteDomain } from "../../constructs/site-domain";
import { synthesize } from "../support/synth";

describe("SiteDomain", () => {
  const { json } = synthesize((scope) => new SiteDomain(scope, "domain", {
    hostedZone: "example.com", recordName: "crm.example.com", address: "${aws_eip.crm_host.public_ip}",
  }));

  it("finds the public hosted zone by name", () => {
    expect(json.data?.aws_route53_zone).toEqual({ crm_site: { name: "example.com", private_zone: false } });
  });

  it("points an A record of the site's name at the Elastic IP, with a short TTL", () => {
    expect(json.resource?.aws_route53_record).toEqual({
      crm_site: {
        zone_id: "${data.aws_route53_zone.crm_site.zone_id}", name: "crm.example.com", type: "A",
        ttl: SITE_RECORD_TTL_SECONDS, records: ["${aws_eip.crm_host.public_ip}"],
      },
    });
    expect(SITE_RECORD_TTL_SECONDS).toBe(300);
  });
});
