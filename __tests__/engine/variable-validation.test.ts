import { Testing } from "cdktf";
import { rmSync, writeFileSync } from "fs";
import { join } from "path";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { newKey } from "../support/ssh-keys";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

/** A value every variable accepts; the variables with defaults are left to them. */
const VALID: Record<string, string | string[]> = {
  vpc_id: "vpc-0123456789abcdef0",
  subnet_id: "subnet-0a1b2c3d",
  availability_zone: "us-east-1b",
  key_pair_name: "crm admin key",
  ssh_public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB admin@example",
  db_root_password: `r0ot 'pa"ss' $HOME \`id\` \\ %{x} \${y}`,
  app_db_password: "app-pass",
  source_host_token: "ghp_0123456789abcdefABCDEF",
};

const SECRETS = ["db_root_password", "app_db_password", "source_host_token"];
/** Checked by preconditions of sensitive variables: a refused value is never printed. */
const NEVER_PRINTED = [...SECRETS, "ssh_public_key"];
const NUMBERS = [
  "data_volume_size_gib",
  "snapshot_retention_count",
  "snapshot_interval_hours",
  "root_volume_size_gib",
  "log_retention_days",
];

const ECDSA_KEY =
  "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEm5Xo6X1rkHqCh0mHqZbQ= admin@example";
const RSA_KEY = newKey("rsa", 2048).line;
const EXPECTED_SECRET = "expected 1 to 256 characters, with no control, format or line/paragraph separator characters";
const EXPECTED_DOTENV = "expected a value the app's .env file can carry for the dotenv parser";

/** [variable, bad value, words the message must hold]. */
const BAD: [string, string | string[], string][] = [
  ["vpc_id", "vpc-123", "expected a VPC id"],
  ["vpc_id", "subnet-0123456789abcdef0", "expected a VPC id"],
  ["subnet_id", "subnet-XYZ12345", "expected a subnet id"],
  ["availability_zone", "us-east-1", "expected an availability zone name"],
  // A zone of another region than the stack's (us-east-1): the instance could not be created there.
  ["availability_zone", "eu-west-3b", "expected an availability zone name such as us-east-1a"],
  ["availability_zone", "us-east-1-bos", "expected an availability zone name"],
  ["key_pair_name", "", "expected a key pair name"],
  ["key_pair_name", "ключ", "expected a key pair name"],
  ["key_pair_name", " crm admin", "not starting or ending with a space"],
  ["key_pair_name", "crm admin ", "not starting or ending with a space"],
  [
    "ssh_public_key",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "expected the public key, the one line of the .pub file: this value is a private key",
  ],
  // EC2's ImportKeyPair takes RSA and ED25519 keys only.
  ["ssh_public_key", ECDSA_KEY, "ssh-ed25519 or ssh-rsa (not ECDSA or DSA)"],
  // The blob names its own type: an ED25519 blob under the ssh-rsa label is no RSA key.
  [
    "ssh_public_key",
    `ssh-rsa ${VALID.ssh_public_key.toString().split(" ")[1]}`,
    "expected a key whose data names the type of its line",
  ],
  ["ssh_public_key", `${VALID.ssh_public_key} \u2028x`, "expected an OpenSSH public key line"],
  ["ssh_ingress_cidrs", ["10.0.0.0/33"], "expected a non-empty list of IPv4 CIDR blocks"],
  // Not network addresses: the AWS provider refuses them at apply.
  ["ssh_ingress_cidrs", ["10.0.0.1/8"], "written with their network address"],
  ["app_ingress_cidrs", ["203.0.113.0/24", "198.51.100.7/24"], "written with their network address"],
  ["app_ingress_cidrs", ["010.0.0.0/8"], "written with their network address"],
  ["ssh_ingress_cidrs", ["2001:db8::/32"], "expected a non-empty list of IPv4 CIDR blocks"],
  ["ssh_ingress_cidrs", [], "expected a non-empty list of IPv4 CIDR blocks"],
  ["app_ingress_cidrs", ["0.0.0.0/0", "everyone"], "expected a non-empty list of IPv4 CIDR blocks"],
  ["db_root_password", "S3cr3t-Root\nPw9-Qz", EXPECTED_SECRET],
  ["app_db_password", "", EXPECTED_SECRET],
  ["source_host_token", "ghp_Tok3n\tXy7-Wv", EXPECTED_SECRET],
  ["source_host_token", "x".repeat(257), EXPECTED_SECRET],
  // Unicode controls, format characters and separators, which RE2's [[:cntrl:]] does not cover.
  ["db_root_password", "S3cr3t-Root\u0085Pw9-Qz", EXPECTED_SECRET],
  ["app_db_password", "App-Pass-One\u2028App-Pass-Two", EXPECTED_SECRET],
  ["app_db_password", "App-Pass-One\u2029App-Pass-Two", EXPECTED_SECRET],
  ["source_host_token", "ghp_Tok3n\u200bXy7-Wv", EXPECTED_SECRET],
  ["source_host_token", "\ufeffghp_Tok3nXy7-Wv", EXPECTED_SECRET],
  ["db_root_password", "S3cr3t-Root\u202ePw9-Qz", EXPECTED_SECRET],
  ["db_root_password", "S3cr3t-Root\ufffdPw9-Qz", EXPECTED_SECRET],
  // What dotenv cannot read back from .env, whichever way the script writes it.
  ["app_db_password", `all-'three"-quotes\` #and-a-hash`, EXPECTED_DOTENV],
  ["app_db_password", `all-'three"-quotes\`-and-a-space `, EXPECTED_DOTENV],
  ["app_db_password", ` all-'three"-quotes\``, EXPECTED_DOTENV],
  ["app_db_password", `'all-three"-quotes\`-leading`, EXPECTED_DOTENV],
  ["app_db_password", `all-'three"-quotes\`-nbsp\u00a0`, EXPECTED_DOTENV],
  ["app_db_password", `\u3000all-'three"-quotes\``, EXPECTED_DOTENV],
  ["app_db_password", `ends-#-in-backslash-'"\`\\`, EXPECTED_DOTENV],
  ["image_parameter", "aws/service/ami", "expected a Parameter Store path"],
  ["bootstrap_version_parameter", "/cdk bootstrap/version", "expected a Parameter Store path"],
  ["bootstrap_version", "6\n", "expected at most 64 characters, with no control"],
  ["bootstrap_version", "6\u2028", "expected at most 64 characters, with no control"],
  ["data_volume_size_gib", "0", "expected a whole number of GiB from 1 to 65536"],
  ["data_volume_size_gib", "10.5", "expected a whole number of GiB from 1 to 65536"],
  ["data_volume_size_gib", "65537", "expected a whole number of GiB from 1 to 65536"],
  ["data_volume_snapshot_id", "vol-0123456789abcdef0", "expected empty, or a snapshot id"],
  ["data_volume_snapshot_id", "snap-0123", "expected empty, or a snapshot id"],
  ["snapshot_retention_count", "0", "expected a whole number of snapshots from 1 to 1000"],
  ["snapshot_retention_count", "1001", "expected a whole number of snapshots from 1 to 1000"],
  ["snapshot_retention_count", "2.5", "expected a whole number of snapshots from 1 to 1000"],
  ["snapshot_interval_hours", "5", "expected one of 1, 2, 3, 4, 6, 8, 12, 24 hours"],
  ["snapshot_interval_hours", "48", "expected one of 1, 2, 3, 4, 6, 8, 12, 24 hours"],
  ["snapshot_interval_hours", "0.5", "expected one of 1, 2, 3, 4, 6, 8, 12, 24 hours"],
  ["instance_type", "T3.micro", "expected an EC2 instance type such as t3.micro"],
  ["instance_type", "t3micro", "expected an EC2 instance type such as t3.micro"],
  ["instance_type", "t3.micro ", "expected an EC2 instance type such as t3.micro"],
  ["root_volume_size_gib", "8", "expected a whole number of GiB from 16 to 65536"],
  ["root_volume_size_gib", "20.5", "expected a whole number of GiB from 16 to 65536"],
  ["root_volume_size_gib", "65537", "expected a whole number of GiB from 16 to 65536"],
  ["log_retention_days", "31", "expected one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400"],
  ["log_retention_days", "0", "(the retention periods CloudWatch Logs takes)"],
];

/** [variable, value]: accepted, because AWS, MariaDB and dotenv all take them as they are. */
const GOOD: [string, string | string[]][] = [
  ["availability_zone", "us-east-1-bos-1a"],
  ["availability_zone", "us-east-1-wl1-bos-wlz-1"],
  ["ssh_public_key", RSA_KEY],
  ["ssh_public_key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB"],
  ["key_pair_name", "crm admin key"],
  ["ssh_ingress_cidrs", ["0.0.0.0/0", "203.0.113.7/32", "10.0.0.0/8"]],
  ["db_root_password", "Ünïcødé pässwörd 🔑 with spaces and all quotes '\"`"],
  ["app_db_password", "abc #def"],
  ["app_db_password", "  surrounded by spaces  "],
  ["app_db_password", "'looks quoted'"],
  ["app_db_password", `"looks double-quoted"`],
  ["app_db_password", "literal \\n and \\r sequences"],
  ["app_db_password", "ends in a backslash\\"],
  ["app_db_password", `all-'three"-quotes\`-but-no-hash`],
  ["app_db_password", `é-all-'three"-quotes\`-é`],
  ["app_db_password", "x".repeat(256)],
  ["source_host_token", "ghp_0123456789abcdefABCDEF"],
];

describeWithEngine("variable validation of the real stack, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    // The stack's own variable blocks and the secrets' checks, without what needs the AWS provider.
    const stack = new CrmHostStack(Testing.app(), exampleStackSettings());
    const { variable, resource } = JSON.parse(Testing.synth(stack));
    const secretChecks = Object.fromEntries(
      Object.entries(resource.terraform_data as Record<string, any>).filter(
        ([, data]) => !data.input?.bootstrap_version_checked && !data.input?.subnet_placement_checked,
      ),
    );
    expect(Object.keys(secretChecks).sort()).toEqual(["secrets", "ssh_public_key"]);
    workspace = new EngineWorkspace(engine, { variable, resource: { terraform_data: secretChecks } });
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it("passes terraform validate", async () => {
    const result = await workspace.run(["validate", "-no-color"]);
    expect({ code: result.code, stdout: result.stdout.trim() }).toEqual({
      code: 0,
      stdout: "Success! The configuration is valid.",
    });
  }, 60_000);

  it("plans with valid values for every variable", async () => {
    const result = await workspace.plan({
      ...VALID,
      ssh_ingress_cidrs: ["203.0.113.7/32", "198.51.100.0/24"],
      app_ingress_cidrs: ["0.0.0.0/0"],
      bootstrap_version: "6",
      image_parameter: "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64",
      data_volume_size_gib: "65536",
      data_volume_snapshot_id: "snap-0123456789abcdef0",
      snapshot_retention_count: "1000",
      detailed_monitoring: "true",
      snapshot_interval_hours: "24",
      instance_type: "m7i-flex.large",
      root_volume_size_gib: "65536",
      log_retention_days: "3653",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("plans without vpc_id and availability_zone: both are optional (the subnet's)", async () => {
    const { vpc_id: _vpc, availability_zone: _zone, ...others } = VALID;
    const result = await workspace.plan(others);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("plans with the smallest accepted sizes and counts, and with 8-digit snapshot ids", async () => {
    const result = await workspace.plan({
      ...VALID,
      data_volume_size_gib: "1",
      data_volume_snapshot_id: "snap-0a1b2c3d",
      snapshot_retention_count: "1",
      detailed_monitoring: "false",
      snapshot_interval_hours: "1",
      instance_type: "t4g.nano",
      root_volume_size_gib: "16",
      log_retention_days: "1",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it.each(BAD)(
    "refuses %s = %j, naming the variable",
    async (name, value, expected) => {
      const result = await workspace.plan({ ...VALID, [name]: value });
      expect(result.code).not.toBe(0);
      const message = flatten(result.stderr);
      expect(message).toContain(`Invalid value for variable "${name}": expected `);
      expect(message).toContain(expected);
      // The value itself is shown next to the message for the numbers (Terraform prints it).
      if (NUMBERS.includes(name)) expect(message).toContain(`var.${name} is ${value}`);
      // A rejected secret or key is never echoed back (Terraform would print it from a validation block).
      if (NEVER_PRINTED.includes(name)) {
        expect(message).toContain("Resource precondition failed");
        expect(message).not.toContain("Invalid value for variable\n");
        for (const part of String(value)
          .split(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\ufffd]/u)
          .filter((piece) => piece.length > 2)) {
          expect(result.stderr).not.toContain(part);
          expect(result.stdout).not.toContain(part);
        }
      }
    },
    60_000,
  );

  it.each(["yes", "1x", ""])(
    "refuses detailed_monitoring = %j, naming the variable (a bool)",
    async (value) => {
      const result = await workspace.plan({ ...VALID, detailed_monitoring: value });
      expect(result.code).not.toBe(0);
      expect(flatten(result.stderr)).toMatch(
        /Unsuitable value for var.detailed_monitoring set using the TF_VAR_detailed_monitoring environment variable: a bool is required/,
      );
    },
    60_000,
  );

  it.each(GOOD)(
    "accepts %s = %j",
    async (name, value) => {
      const result = await workspace.plan({ ...VALID, [name]: value });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    },
    60_000,
  );

  it.each(SECRETS)(
    "refuses invalid UTF-8 in %s given through TF_VAR_, without printing the value",
    async (name) => {
      // 0xff and a lone continuation byte: MariaDB's utf8mb4 conversion would turn them into "?".
      const bytes = Buffer.concat([
        Buffer.from("Visible-Head-"),
        Buffer.from([0xff, 0x80]),
        Buffer.from("-Visible-Tail"),
      ]);
      const { [name]: _given, ...others } = VALID;
      const result = await workspace.plan(others, { [name]: bytes });
      expect(result.code).not.toBe(0);
      expect(flatten(result.stderr)).toContain(`Invalid value for variable "${name}": ${EXPECTED_SECRET}`);
      expect(result.stderr + result.stdout).not.toMatch(/Visible-(Head|Tail)/);
    },
    60_000,
  );

  it("prints a malformed *.tfvars line, secret included (why the README steers secrets to TF_VAR_)", async () => {
    const file = join(workspace.dir, "terraform.tfvars");
    writeFileSync(file, 'app_db_password = "Tfvars-S3cret \\q-oops"\n');
    try {
      const { app_db_password: _given, ...others } = VALID;
      const result = await workspace.plan(others);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('app_db_password = "Tfvars-S3cret \\q-oops"');
    } finally {
      rmSync(file);
    }
  }, 60_000);

  it("requires the secrets: there is no default to fall back on", async () => {
    const { db_root_password: _omitted, ...withoutRootPassword } = VALID;
    const result = await workspace.plan(withoutRootPassword);
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toMatch(/No value for required variable|variable "db_root_password"/);
  }, 60_000);
});
