import { SecurityGroup } from "@cdktf/provider-aws/lib/security-group";
import { CrmSecurityGroup } from "../../constructs/crm-security-group";
import { only, synthesize } from "../support/synth";

describe("CrmSecurityGroup", () => {
  it("opens tcp 22, 3000 and 80 to every address and lets all traffic out, every rule described", () => {
    const { text, json } = synthesize((scope) => new CrmSecurityGroup(scope, "sg", { vpcId: "vpc-0123456789abcdef0" }));
    expect(text).toHaveResourceWithProperties(SecurityGroup, {
      vpc_id: "vpc-0123456789abcdef0",
      description: "Allow SSH (22) and HTTP (80, 3000) access to the CRM host",
    });
    const group = only(json.resource, "aws_security_group");
    // cdktf writes every other field of an inline rule as null: no IPv6, prefix list, group or self sources.
    const unset = { ipv6_cidr_blocks: null, prefix_list_ids: null, security_groups: null, self: null };
    expect(group.ingress).toEqual([
      { protocol: "tcp", from_port: 22, to_port: 22, cidr_blocks: ["0.0.0.0/0"], description: "SSH", ...unset },
      {
        protocol: "tcp",
        from_port: 3000,
        to_port: 3000,
        cidr_blocks: ["0.0.0.0/0"],
        description: "application back end",
        ...unset,
      },
      { protocol: "tcp", from_port: 80, to_port: 80, cidr_blocks: ["0.0.0.0/0"], description: "HTTP", ...unset },
    ]);
    expect(group.egress).toEqual([
      {
        protocol: "-1",
        from_port: 0,
        to_port: 0,
        cidr_blocks: ["0.0.0.0/0"],
        description: "all outbound traffic",
        ...unset,
      },
    ]);
  });

  it("opens tcp 443 (HTTPS) only with a domain, after the original stack's rules, to the application sources", () => {
    const { json } = synthesize(
      (scope) =>
        new CrmSecurityGroup(scope, "sg", {
          vpcId: "vpc-0123456789abcdef0",
          appIngressCidrs: ["198.51.100.0/24"],
          https: true,
        }),
    );
    const ingress = only(json.resource, "aws_security_group").ingress;
    expect(ingress.map((rule: { from_port: number }) => rule.from_port)).toEqual([22, 3000, 80, 443]);
    expect(ingress[3]).toMatchObject({
      protocol: "tcp",
      to_port: 443,
      cidr_blocks: ["198.51.100.0/24"],
      description: "HTTPS",
    });
    const without = only(
      synthesize((scope) => new CrmSecurityGroup(scope, "sg", { vpcId: "vpc-0123456789abcdef0" })).json.resource,
      "aws_security_group",
    );
    expect(without.ingress.map((rule: { from_port: number }) => rule.from_port)).toEqual([22, 3000, 80]);
  });

  it("narrows SSH and the application ports separately", () => {
    const { json } = synthesize(
      (scope) =>
        new CrmSecurityGroup(scope, "sg", {
          vpcId: "vpc-0123456789abcdef0",
          sshIngressCidrs: ["203.0.113.7/32"],
          appIngressCidrs: ["198.51.100.0/24", "192.0.2.0/24"],
          description: "custom",
          tags: { Team: "crm" },
        }),
    );
    const group = only(json.resource, "aws_security_group");
    expect(group.ingress.map((rule: any) => [rule.from_port, rule.cidr_blocks])).toEqual([
      [22, ["203.0.113.7/32"]],
      [3000, ["198.51.100.0/24", "192.0.2.0/24"]],
      [80, ["198.51.100.0/24", "192.0.2.0/24"]],
    ]);
    expect(group.egress[0].cidr_blocks).toEqual(["0.0.0.0/0"]);
    expect(group.description).toBe("custom");
    expect(group.tags).toEqual({ Team: "crm" });
  });

  it("stops the plan before the CIDR lists need more inbound rules than the quota: one per CIDR block and port", () => {
    const { json } = synthesize(
      (scope) =>
        new CrmSecurityGroup(scope, "sg", {
          vpcId: "vpc-0123456789abcdef0",
          sshIngressCidrs: ["203.0.113.7/32"],
          appIngressCidrs: ["198.51.100.0/24", "192.0.2.0/24"],
          inboundRuleQuota: 4,
          inboundRuleNames: { cidrs: "the lists", quota: "the quota of this test" },
        }),
    );
    const [check] = only(json.resource, "aws_security_group").lifecycle.precondition;
    expect(check.condition).toBe(
      '${(((length(["203.0.113.7/32"]) + length(["198.51.100.0/24", "192.0.2.0/24"])) + ' +
        'length(["198.51.100.0/24", "192.0.2.0/24"])) <= 4)}',
    );
    expect(check.error_message).toMatch(
      /^Invalid value for the lists: expected at most 4 inbound rules, AWS's quota "Inbound or outbound rules per security group" \(the quota of this test: 60 by default, 1,000 at most in any account; raise it in Service Quotas first\); the lists make \$\{.*\}, one per CIDR block and port \(22: \$\{length\(\["203.0.113.7\/32"\]\)\}, 3000: .*, 80: .*\)\.$/,
    );
    const defaults = only(
      synthesize((scope) => new CrmSecurityGroup(scope, "sg", { vpcId: "vpc-0123456789abcdef0" })).json.resource,
      "aws_security_group",
    ).lifecycle.precondition[0];
    expect(defaults.condition).toMatch(/<= 60\)\}$/);
  });
});
