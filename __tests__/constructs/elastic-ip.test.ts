import { TerraformOutput } from "cdktf";
import { ElasticIp } from "../../constructs/elastic-ip";
import { only, synthesize } from "../support/synth";

describe("ElasticIp", () => {
  const { json } = synthesize((scope) => {
    const address = new ElasticIp(scope, "address", { nameTag: "Stack/Web" });
    address.associateWith("${aws_instance.web.id}");
  });

  it("allocates a VPC address tagged <stack_name>/<instance_name>, under a readable name", () => {
    expect(json.resource?.aws_eip).toEqual({ crm_host: { domain: "vpc", tags: { Name: "Stack/Web" } } });
  });

  it("associates it with the instance by a resource of its own, so that the address exists before the instance", () => {
    expect(only(json.resource, "aws_eip_association")).toEqual({
      allocation_id: "${aws_eip.crm_host.allocation_id}",
      instance_id: "${aws_instance.web.id}",
    });
    expect(json.resource?.aws_eip.crm_host).not.toHaveProperty("instance");
  });

  it("gives the address and EC2's DNS name of it, and takes another name", () => {
    const { json: other } = synthesize((scope) => {
      const address = new ElasticIp(scope, "address", { nameTag: "S/W", name: "edge" });
      new TerraformOutput(scope, "ip", { value: address.publicIp });
      new TerraformOutput(scope, "dns", { value: address.publicDns });
    });
    expect([other.output?.ip.value, other.output?.dns.value]).toEqual([
      "${aws_eip.edge.public_ip}",
      "${aws_eip.edge.public_dns}",
    ]);
  });
});
