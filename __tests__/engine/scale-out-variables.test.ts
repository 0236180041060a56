/**
 * The scale-out topology's variables and its subnet check, planned by a real engine: the stack's
 * ScaleOutVariables and SubnetZones, with what the aws_subnet data sources would read (each subnet's
 * zone, VPC and CIDR block) given as map variables (stand-ins).
 */
import { TerraformVariable } from "cdktf";
import { ScaleOutVariables } from "../../constructs/scale-out-variables";
import { SubnetZones } from "../../constructs/subnet-zones";
import { synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

const A = "subnet-0123456789abcdef0";
const B = "subnet-0fedcba9876543210";
const VPC = "vpc-0a1b2c3d4e5f60718";
const SUBNETS = { subnet_ids: [A, B] };
/** What the data sources read: two zones, one VPC. */
const FACTS = {
  stand_in_zones: JSON.stringify({ [A]: "us-east-1a", [B]: "us-east-1b" }),
  stand_in_vpcs: JSON.stringify({ [A]: VPC, [B]: VPC }),
  stand_in_cidr_blocks: JSON.stringify({ [A]: "10.0.1.0/24", [B]: "10.0.2.0/24" }),
};

/** [variable, bad value, words the message must hold]. */
const BAD: [string, string | string[], string][] = [
  ["subnet_ids", [A], "expected two or more subnet ids"],
  ["subnet_ids", [A, "subnet-XYZ"], "expected two or more subnet ids"],
  ["subnet_ids", [A, A], "expected each subnet id once"],
  ["release_ref", "-rf", "expected empty, or a branch, tag or commit"],
  ["release_ref", "v1..v2", "expected empty, or a branch, tag or commit"],
  ["release_ref", "it's", "expected empty, or a branch, tag or commit"],
  ["host_instance_type", "t3 micro", "expected an EC2 instance type"],
  ["hosts_min_size", "0", "expected a whole number"],
  ["hosts_max_size", "1", "expected at least hosts_min_size"],
  ["hosts_desired_capacity", "4", "expected from hosts_min_size to one below hosts_max_size"],
  ["hosts_desired_capacity", "1.5", "expected a whole number"],
  ["instance_refresh_max_healthy_percentage", "201", "expected a whole number of percent from 100 to 200"],
  ["instance_refresh_max_healthy_percentage", "149", "expected room for one new host beside hosts_desired_capacity"],
  ["database_instance_class", "t4g.micro", "expected an RDS instance class"],
  ["database_allocated_storage_gib", "10", "expected a whole number"],
  [
    "database_max_allocated_storage_gib",
    "21",
    "expected 0, or a whole number of GiB up to 65536 and at least 10 percent above",
  ],
  ["database_backup_retention_days", "0", "expected a whole number"],
  ["database_backup_retention_days", "36", "expected a whole number"],
];

describeWithEngine("scale-out variables and subnet zones, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    const { json } = synthesize((scope) => {
      new ScaleOutVariables(scope, "scale_out");
      new SubnetZones(scope, "placement", {
        subnetIds: "var.subnet_ids",
        variableName: "subnet_ids",
        facts: (construct) => {
          for (const name of ["stand_in_zones", "stand_in_vpcs", "stand_in_cidr_blocks"]) {
            new TerraformVariable(construct, name, { type: "map(string)" }).overrideLogicalId(name);
          }
          return { zones: "var.stand_in_zones", vpcs: "var.stand_in_vpcs", cidrBlocks: "var.stand_in_cidr_blocks" };
        },
      });
    });
    workspace = new EngineWorkspace(engine, json);
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it("plans with only subnet_ids (the defaults: two hosts up to four, db.t4g.micro, seven days of backups)", async () => {
    const result = await workspace.plan({ ...SUBNETS, ...FACTS });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("plans with every variable set to an accepted value", async () => {
    const result = await workspace.plan({
      ...SUBNETS,
      ...FACTS,
      release_ref: "release/2026.11",
      host_instance_type: "m7i.large",
      hosts_min_size: "3",
      hosts_max_size: "6",
      hosts_desired_capacity: "4",
      instance_refresh_max_healthy_percentage: "125",
      database_instance_class: "db.m7g.large",
      database_allocated_storage_gib: "100",
      database_max_allocated_storage_gib: "0",
      database_multi_az: "true",
      database_backup_retention_days: "35",
      database_deletion_protection: "false",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("plans a refresh one new host at a time: instance_refresh_max_healthy_percentage = 150 with two hosts, room for three", async () => {
    const result = await workspace.plan({
      ...SUBNETS,
      ...FACTS,
      hosts_max_size: "3",
      instance_refresh_max_healthy_percentage: "150",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it.each(BAD)(
    "refuses %s = %j, naming the variable: %s",
    async (name, value, words) => {
      const result = await workspace.plan({ ...SUBNETS, ...FACTS, [name]: value });
      expect(result.code).not.toBe(0);
      const text = flatten(result.stderr);
      expect(text).toContain(`Invalid value for variable "${name}": ${words}`);
    },
    60_000,
  );

  it("fails the plan when the subnets are in one zone, naming each subnet and its zone", async () => {
    const result = await workspace.plan({
      ...SUBNETS,
      ...FACTS,
      stand_in_zones: JSON.stringify({ [A]: "us-east-1a", [B]: "us-east-1a" }),
    });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      'Invalid value for variable "subnet_ids": expected subnets in two or more Availability Zones',
    );
    expect(flatten(result.stderr)).toContain(`they are ${A} in us-east-1a, ${B} in us-east-1a.`);
  }, 60_000);

  it("fails the plan when the subnets are in two VPCs, naming them", async () => {
    const result = await workspace.plan({
      ...SUBNETS,
      ...FACTS,
      stand_in_vpcs: JSON.stringify({ [A]: VPC, [B]: "vpc-0fffffffffffffff0" }),
    });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      `expected subnets of one VPC; they are ${A} in ${VPC}, ${B} in vpc-0fffffffffffffff0.`,
    );
  }, 60_000);
});
