import { SITE_RECORD_TTL_SECONDS, SiteDomain } from "../../constructs/site-domain";
import { synthesize } from "../support/synth";

describe("SiteDomain", () => {
  const { json } = synthesize(
    (scope) =>
      new SiteDomain(scope, "domain", {
        hostedZone: "example.com",
        recordName: "crm.example.com",
        address: "${aws_eip.crm_host.public_ip}",
      }),
  );

  it("finds the public hosted zone by name", () => {
    expect(json.data?.aws_route53_zone).toEqual({ crm_site: { name: "example.com", private_zone: false } });
  });

  it("points an A record of the site's name at the Elastic IP, with a short TTL, taking over a record of that name", () => {
    expect(json.resource?.aws_route53_record).toEqual({
      crm_site: {
        zone_id: "${data.aws_route53_zone.crm_site.zone_id}",
        name: "crm.example.com",
        type: "A",
        ttl: SITE_RECORD_TTL_SECONDS,
        records: ["${aws_eip.crm_host.public_ip}"],
        allow_overwrite: true,
      },
    });
    expect(SITE_RECORD_TTL_SECONDS).toBe(300);
  });

  it("points the name at a load balancer by an alias record instead, which answers only while a host is healthy, and takes over the single host's record", () => {
    let twice: () => void = () => undefined;
    const { json: alias } = synthesize((scope) => {
      const site = new SiteDomain(scope, "domain", { hostedZone: "example.com", recordName: "crm.example.com" });
      site.aliasTo("${aws_lb.crm_load_balancer.dns_name}", "${aws_lb.crm_load_balancer.zone_id}");
      twice = () => site.aliasTo("x", "y");
    });
    expect(alias.resource?.aws_route53_record).toEqual({
      crm_site: {
        zone_id: "${data.aws_route53_zone.crm_site.zone_id}",
        name: "crm.example.com",
        type: "A",
        alias: {
          name: "${aws_lb.crm_load_balancer.dns_name}",
          zone_id: "${aws_lb.crm_load_balancer.zone_id}",
          evaluate_target_health: true,
        },
        allow_overwrite: true,
      },
    });
    expect(twice).toThrow("already points at an address");
  });
});
