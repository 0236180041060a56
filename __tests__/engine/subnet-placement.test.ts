/**
 * The placement checks, planned by a real engine: the stack's DeploymentVariables, SubnetVariables and SubnetPlacement,
 * with what the aws_subnet and aws_vpc data sources would read given as variables (stand-ins).
 */
import { TerraformVariable } from "cdktf";
import { DeploymentVariables } from "../../constructs/deployment-variables";
import { SubnetVariables } from "../../constructs/subnet-variables";
import { SubnetPlacement } from "../../constructs/subnet-placement";
import { synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

const SUBNET = "subnet-0123456789abcdef0";
const VPC = "vpc-0a1b2c3d4e5f60718";
const REQUIRED = {
  subnet_id: SUBNET,
  key_pair_name: "crm-admin",
  ssh_public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB admin@example",
};
/** What the data sources read: the subnet's VPC and zone, and the VPC's DNS hostnames setting. */
const SUBNET_FACTS = { stand_in_vpc_id: VPC, stand_in_availability_zone: "us-east-1b", stand_in_dns_hostnames: "true" };

describeWithEngine("subnet placement checks, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    const { json } = synthesize((scope) => {
      new DeploymentVariables(scope, "inputs");
      new SubnetVariables(scope, "subnet", { region: "us-east-1" });
      new SubnetPlacement(scope, "placement", {
        subnetId: "var.subnet_id",
        givenVpcId: "var.vpc_id",
        givenAvailabilityZone: "var.availability_zone",
        facts: (construct) => {
          for (const [name, type] of [
            ["stand_in_vpc_id", "string"],
            ["stand_in_availability_zone", "string"],
            ["stand_in_dns_hostnames", "bool"],
          ]) {
            new TerraformVariable(construct, name, { type }).overrideLogicalId(name);
          }
          return {
            vpcId: "var.stand_in_vpc_id",
            availabilityZone: "var.stand_in_availability_zone",
            vpcDnsHostnames: "var.stand_in_dns_hostnames",
          };
        },
      });
    });
    workspace = new EngineWorkspace(engine, json);
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it("plans with only subnet_id: the VPC and the zone are the subnet's", async () => {
    const result = await workspace.plan({ ...REQUIRED, ...SUBNET_FACTS });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("plans when vpc_id and availability_zone are given and agree with the subnet", async () => {
    const result = await workspace.plan({ ...REQUIRED, ...SUBNET_FACTS, vpc_id: VPC, availability_zone: "us-east-1b" });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("fails the plan naming vpc_id when it is not the subnet's VPC", async () => {
    const result = await workspace.plan({ ...REQUIRED, ...SUBNET_FACTS, vpc_id: "vpc-0fffffffffffffff0" });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      `vpc_id vpc-0fffffffffffffff0 is not the VPC of subnet_id ${SUBNET}, which is in ${VPC}`,
    );
    expect(flatten(result.stderr)).not.toContain("availability_zone");
  }, 60_000);

  it("fails the plan naming availability_zone when it is not the subnet's zone", async () => {
    const result = await workspace.plan({ ...REQUIRED, ...SUBNET_FACTS, availability_zone: "us-east-1a" });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      `availability_zone us-east-1a is not the zone of subnet_id ${SUBNET}, which is in us-east-1b`,
    );
    expect(flatten(result.stderr)).not.toContain("vpc_id vpc-");
  }, 60_000);

  it("fails the plan in a VPC without DNS hostnames, naming the VPC and the setting", async () => {
    const result = await workspace.plan({ ...REQUIRED, ...SUBNET_FACTS, stand_in_dns_hostnames: "false" });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      `The VPC ${VPC} of subnet_id ${SUBNET} has DNS hostnames off (enable_dns_hostnames,`,
    );
    expect(flatten(result.stderr)).toContain(`aws ec2 modify-vpc-attribute --vpc-id ${VPC} --enable-dns-hostnames`);
  }, 60_000);

  it("still validates a given vpc_id or availability_zone by its form first", async () => {
    const result = await workspace.plan({
      ...REQUIRED,
      ...SUBNET_FACTS,
      vpc_id: "vpc-XYZ",
      availability_zone: "eu-west-1a",
    });
    expect(flatten(result.stderr)).toContain('Invalid value for variable "vpc_id"');
    expect(flatten(result.stderr)).toContain('Invalid value for variable "availability_zone"');
  }, 60_000);
});
