import { TerraformOutput } from "cdktf";
import { SubnetZones } from "../../constructs/subnet-zones";
import { only, synthesize } from "../support/synth";

describe("SubnetZones", () => {
  const { json } = synthesize((scope) => {
    const placement = new SubnetZones(scope, "placement", { subnetIds: "var.subnet_ids", variableName: "subnet_ids" });
    new TerraformOutput(scope, "vpc", { value: placement.vpcId });
    new TerraformOutput(scope, "cidrs", { value: placement.cidrBlocks });
  });

  it("reads each subnet with one data source per id", () => {
    expect(json.data?.aws_subnet).toEqual({ crm_hosts: { for_each: "${toset(var.subnet_ids)}", id: "${each.value}" } });
  });

  it("derives the subnets' zones and VPCs by id, the VPC and the CIDR blocks from them", () => {
    expect(json.locals).toEqual({
      crm_hosts_subnet_zones: "${{for id, subnet in data.aws_subnet.crm_hosts : id => subnet.availability_zone}}",
      crm_hosts_subnet_vpcs: "${{for id, subnet in data.aws_subnet.crm_hosts : id => subnet.vpc_id}}",
    });
    expect(json.output?.vpc.value).toBe("${values(local.crm_hosts_subnet_vpcs)[0]}");
    expect(json.output?.cidrs.value).toBe(
      "${values({for id, subnet in data.aws_subnet.crm_hosts : id => subnet.cidr_block})}",
    );
  });

  it("checks at plan that they are in two or more zones of one VPC, naming each subnet and its zone (the engine test plans it)", () => {
    const check = only(json.resource, "terraform_data");
    expect(json.resource?.terraform_data).toHaveProperty("crm_hosts_placement");
    expect(check.lifecycle.precondition.map((p: { condition: string }) => p.condition)).toEqual([
      "${length(distinct(values(local.crm_hosts_subnet_zones))) >= 2}",
      "${length(distinct(values(local.crm_hosts_subnet_vpcs))) == 1}",
    ]);
    expect(check.lifecycle.precondition[0].error_message).toBe(
      'Invalid value for variable "subnet_ids": expected subnets in two or more ' +
        "Availability Zones (the load balancer and the database's subnet group need two, and the app must outlive one zone's trouble); they are " +
        '${join(", ", [for id, value in local.crm_hosts_subnet_zones : "${id} in ${value}"])}.',
    );
  });
});
