import { TierSecurityGroup } from "../../constructs/tier-security-group";
import { Testing } from "cdktf";
import { only, synthesize } from "../support/synth";

describe("TierSecurityGroup", () => {
  const { json } = synthesize((scope) => {
    new TierSecurityGroup(scope, "front", {
      vpcId: "vpc-1",
      description: "front",
      nameTag: "S/W/front",
      name: "front",
      ingress: [{ port: 80, description: "HTTP", cidrBlocks: ["0.0.0.0/0"] }],
      egress: [{ port: 3000, description: "to the hosts", cidrBlocks: ["10.0.0.0/16"] }],
      inboundRuleQuota: 60,
    });
    new TierSecurityGroup(scope, "back", {
      vpcId: "vpc-1",
      description: "back",
      nameTag: "S/W/back",
      name: "back",
      ingress: [{ port: 3306, description: "MariaDB", securityGroups: ["${aws_security_group.front.id}"] }],
    });
  });
  const groups: Record<string, any> = json.resource?.aws_security_group ?? {};

  it("admits one TCP port per rule, from CIDR blocks or from the tier in front by its security group, each described", () => {
    expect(groups.front.ingress).toMatchObject([
      { protocol: "tcp", from_port: 80, to_port: 80, cidr_blocks: ["0.0.0.0/0"], description: "HTTP" },
    ]);
    expect(groups.back.ingress).toMatchObject([
      {
        protocol: "tcp",
        from_port: 3306,
        to_port: 3306,
        security_groups: ["${aws_security_group.front.id}"],
        description: "MariaDB",
      },
    ]);
    expect(groups.front).toMatchObject({ vpc_id: "vpc-1", description: "front", tags: { Name: "S/W/front" } });
  });

  it("opens no egress unless given: the database's group answers, it starts no connection", () => {
    expect(groups.back.egress).toEqual([]);
    expect(groups.back.ingress[0].cidr_blocks).toBeNull();
    expect(groups.front.egress).toMatchObject([
      { protocol: "tcp", from_port: 3000, to_port: 3000, cidr_blocks: ["10.0.0.0/16"], description: "to the hosts" },
    ]);
  });

  it("checks the account's inbound rule quota at plan when the ingress has a list a user can grow", () => {
    expect(groups.front.lifecycle.precondition).toEqual([
      expect.objectContaining({ condition: '${(length(["0.0.0.0/0"]) <= 60)}' }),
    ]);
    expect(groups.back.lifecycle).toBeUndefined();
    expect(() => only(json.resource, "aws_security_group")).toThrow("found 2");
  });

  it("refuses, at synthesis, a group or rule description with a character EC2 refuses, naming the value", () => {
    const build = (description: string, ruleDescription: string) => () =>
      Testing.synthScope(
        (scope) =>
          new TierSecurityGroup(scope, "g", {
            vpcId: "vpc-1",
            description,
            nameTag: "S/W/g",
            name: "g",
            ingress: [],
            egress: [{ port: 3000, description: ruleDescription, cidrBlocks: ["10.0.0.0/16"] }],
          }),
      );
    expect(build("Allow the hosts' 3000", "ok")).toThrow(
      /^security group g: description "Allow the hosts' 3000": EC2 allows only a-zA-Z0-9\. _-:\/\(\)#,@\[\]\+=&;\{\}!\$\* \(at most 255\), not "'"$/,
    );
    expect(build("ok", "to the hosts' port")).toThrow(`security group g: rule description "to the hosts' port"`);
    expect(build("é\n", "ok")).toThrow(`not "é\\n"`);
    expect(build("x".repeat(256), "ok")).toThrow("not 256 characters");
    expect(build("a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*", "ok")).not.toThrow();
  });
});
