import { Testing } from "cdktf";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

/** A value every variable accepts; the variables with defaults are left to them. */
const VALID: Record<string, string | string[]> = {
  vpc_id: "vpc-0123456789abcdef0",
  subnet_id: "subnet-0a1b2c3d",
  availability_zone: "eu-west-3b",
  key_pair_name: "crm admin key",
  ssh_public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB admin@example",
  db_root_password: `r0ot 'pa"ss' $HOME \`id\` \\ %{x} \${y}`,
  app_db_password: "app-pass",
  source_host_token: "ghp_0123456789abcdefABCDEF",
};

const SECRETS = ["db_root_password", "app_db_password", "source_host_token"];
const NUMBERS = ["data_volume_size_gib", "snapshot_retention_count"];

/** [variable, bad value, words the message must hold]. */
const BAD: [string, string | string[], string][] = [
  ["vpc_id", "vpc-123", "expected a VPC id"],
  ["vpc_id", "subnet-0123456789abcdef0", "expected a VPC id"],
  ["subnet_id", "subnet-XYZ12345", "expected a subnet id"],
  ["availability_zone", "us-east-1", "expected an availability zone name"],
  ["key_pair_name", "", "expected a key pair name"],
  ["key_pair_name", "ключ", "expected a key pair name"],
  ["ssh_public_key", "-----BEGIN OPENSSH PRIVATE KEY-----", "expected an OpenSSH public key line"],
  ["ssh_ingress_cidrs", ["10.0.0.0/33"], "expected a non-empty list of IPv4 CIDR blocks"],
  ["ssh_ingress_cidrs", ["2001:db8::/32"], "expected a non-empty list of IPv4 CIDR blocks"],
  ["ssh_ingress_cidrs", [], "expected a non-empty list of IPv4 CIDR blocks"],
  ["app_ingress_cidrs", ["0.0.0.0/0", "everyone"], "expected a non-empty list of IPv4 CIDR blocks"],
  ["db_root_password", "S3cr3t-Root\nPw9-Qz", "expected 1 to 256 printable characters"],
  ["app_db_password", "", "expected 1 to 256 printable characters"],
  ["source_host_token", "ghp_Tok3n\tXy7-Wv", "expected 1 to 256 printable characters"],
  ["source_host_token", "x".repeat(257), "expected 1 to 256 printable characters"],
  ["image_parameter", "aws/service/ami", "expected a Parameter Store path"],
  ["bootstrap_version_parameter", "/cdk bootstrap/version", "expected a Parameter Store path"],
  ["bootstrap_version", "6\n", "expected at most 64 printable characters"],
  ["data_volume_size_gib", "0", "expected a whole number of GiB from 1 to 65536"],
  ["data_volume_size_gib", "10.5", "expected a whole number of GiB from 1 to 65536"],
  ["data_volume_size_gib", "65537", "expected a whole number of GiB from 1 to 65536"],
  ["data_volume_snapshot_id", "vol-0123456789abcdef0", "expected empty, or a snapshot id"],
  ["data_volume_snapshot_id", "snap-0123", "expected empty, or a snapshot id"],
  ["snapshot_retention_count", "0", "expected a whole number of snapshots from 1 to 1000"],
  ["snapshot_retention_count", "1001", "expected a whole number of snapshots from 1 to 1000"],
  ["snapshot_retention_count", "2.5", "expected a whole number of snapshots from 1 to 1000"],
];

describeWithEngine("variable validation of the real stack, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    // The stack's own variable blocks and the secrets' checks, without what needs the AWS provider.
    const stack = new CrmHostStack(Testing.app(), exampleStackSettings());
    const { variable, resource } = JSON.parse(Testing.synth(stack));
    const secretChecks = Object.fromEntries(Object.entries(resource.terraform_data as Record<string, any>)
      .filter(([, data]) => !data.input?.bootstrap_version_checked));
    expect(Object.keys(secretChecks)).toHaveLength(1);
    workspace = new EngineWorkspace(engine, { variable, resource: { terraform_data: secretChecks } });
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it("passes terraform validate", async () => {
    const result = await workspace.run(["validate", "-no-color"]);
    expect({ code: result.code, stdout: result.stdout.trim() }).toEqual({ code: 0, stdout: "Success! The configuration is valid." });
  }, 60_000);

  it("plans with valid values for every variable", async () => {
    const result = await workspace.plan({
      ...VALID, ssh_ingress_cidrs: ["203.0.113.7/32", "198.51.100.0/24"], app_ingress_cidrs: ["0.0.0.0/0"],
      bootstrap_version: "6", image_parameter: "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64",
      data_volume_size_gib: "65536", data_volume_snapshot_id: "snap-0123456789abcdef0", snapshot_retention_count: "1000",
      detailed_monitoring: "true",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("plans with the smallest accepted sizes and counts, and with 8-digit snapshot ids", async () => {
    const result = await workspace.plan({
      ...VALID, data_volume_size_gib: "1", data_volume_snapshot_id: "snap-0a1b2c3d", snapshot_retention_count: "1",
      detailed_monitoring: "false",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it.each(BAD)("refuses %s = %j, naming the variable", async (name, value, expected) => {
    const result = await workspace.plan({ ...VALID, [name]: value });
    expect(result.code).not.toBe(0);
    const message = flatten(result.stderr);
    expect(message).toContain(`Invalid value for variable "${name}": ${expected}`);
    // The value itself is shown next to the message for the numbers (Terraform prints it).
    if (NUMBERS.includes(name)) expect(message).toContain(`var.${name} is ${value}`);
    // A rejected secret is never echoed back (Terraform would print it from a validation block).
    if (SECRETS.includes(name)) {
      expect(message).toContain("Resource precondition failed");
      for (const line of String(value).split(/[\n\t]/).filter((part) => part.length > 2)) {
        expect(result.stderr).not.toContain(line);
      }
    }
  }, 60_000);

  it.each(["yes", "1x", ""])("refuses detailed_monitoring = %j, naming the variable (a bool)", async (value) => {
    const result = await workspace.plan({ ...VALID, detailed_monitoring: value });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toMatch(/Unsuitable value for var.detailed_monitoring set using the TF_VAR_detailed_monitoring environment variable: a bool is required/);
  }, 60_000);

  it("requires the secrets: there is no default to fall back on", async () => {
    const { db_root_password: _omitted, ...withoutRootPassword } = VALID;
    const result = await workspace.plan(withoutRootPassword);
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toMatch(/No value for required variable|variable "db_root_password"/);
  }, 60_000);
});
