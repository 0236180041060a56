import { TerraformOutput } from "cdktf";
import { SubnetPlacement } from "../../constructs/subnet-placement";
import { only, synthesize } from "../support/synth";

describe("SubnetPlacement", () => {
  const { json } = synthesize((scope) => {
    const made = new SubnetPlacement(scope, "placement", {
      subnetId: "var.subnet_id",
      givenVpcId: "var.vpc_id",
      givenAvailabilityZone: "var.availability_zone",
    });
    new TerraformOutput(scope, "vpc", { value: made.vpcId });
    new TerraformOutput(scope, "zone", { value: made.availabilityZone });
  });

  it("reads the subnet and its VPC, and gives the subnet's VPC and zone", () => {
    expect(json.data?.aws_subnet).toEqual({ crm_host: { id: "${var.subnet_id}" } });
    expect(json.data?.aws_vpc).toEqual({ crm_host: { id: "${data.aws_subnet.crm_host.vpc_id}" } });
    expect([json.output?.vpc.value, json.output?.zone.value]).toEqual([
      "${data.aws_subnet.crm_host.vpc_id}",
      "${data.aws_subnet.crm_host.availability_zone}",
    ]);
  });

  it("checks at plan time that a given VPC and zone are the subnet's, and that the VPC has DNS hostnames", () => {
    const check = only(json.resource, "terraform_data");
    expect(json.resource?.terraform_data).toHaveProperty("crm_host_placement");
    expect(check.lifecycle.precondition.map((p: { condition: string }) => p.condition)).toEqual([
      "${var.vpc_id == null || var.vpc_id == data.aws_subnet.crm_host.vpc_id}",
      "${var.availability_zone == null || var.availability_zone == data.aws_subnet.crm_host.availability_zone}",
      "${data.aws_vpc.crm_host.enable_dns_hostnames}",
    ]);
    const messages: string[] = check.lifecycle.precondition.map((p: { error_message: string }) => p.error_message);
    expect(messages[0]).toMatch(
      /^vpc_id \$\{coalesce\(var\.vpc_id, "\(unset\)"\)\} is not the VPC of subnet_id \$\{var\.subnet_id\}/,
    );
    expect(messages[1]).toMatch(
      /^availability_zone \$\{coalesce\(var\.availability_zone, "\(unset\)"\)\} is not the zone of subnet_id/,
    );
    expect(messages[2]).toContain("has DNS hostnames off (enable_dns_hostnames");
  });
});
