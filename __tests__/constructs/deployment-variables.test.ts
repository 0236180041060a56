import { DeploymentVariables } from "../../constructs/deployment-variables";
import { AL2023_KERNEL_6_1_X86_64_PARAMETER } from "../../constructs/ssm-image-parameter";
import { synthesize } from "../support/synth";

describe("DeploymentVariables", () => {
  const { json } = synthesize((scope) => new DeploymentVariables(scope, "inputs"));
  const variables = json.variable ?? {};

  it("declares the per-account values under their own names, without defaults", () => {
    for (const name of ["key_pair_name", "ssh_public_key"]) {
      expect(variables[name]).toMatchObject({ type: "string", nullable: false, description: expect.any(String) });
      expect(variables[name].default).toBeUndefined();
    }
  });

  it("lets SSH and the application ports be narrowed, open to every address by default", () => {
    expect(variables.ssh_ingress_cidrs).toMatchObject({ type: "list(string)", default: ["0.0.0.0/0"] });
    expect(variables.app_ingress_cidrs).toMatchObject({ type: "list(string)", default: ["0.0.0.0/0"] });
    const narrowed =
      synthesize(
        (scope) =>
          new DeploymentVariables(scope, "inputs", {
            defaultSshIngressCidrs: ["203.0.113.0/24"],
            defaultAppIngressCidrs: ["198.51.100.0/24"],
          }),
      ).json.variable ?? {};
    expect(narrowed.ssh_ingress_cidrs.default).toEqual(["203.0.113.0/24"]);
    expect(narrowed.app_ingress_cidrs.default).toEqual(["198.51.100.0/24"]);
  });

  it.each([["key_pair_name", "^[!-~]([ -~]{0,253}[!-~])?$", "a key pair name"]])(
    "validates %s against %s with a message naming it",
    (name, pattern, expected) => {
      expect(variables[name].validation).toEqual([
        {
          condition: `\${can(regex("${pattern.replace(/\\/g, "\\\\")}", var.${name}))}`,
          error_message: expect.stringMatching(
            new RegExp(`^Invalid value for variable "${name}": expected ${expected}`),
          ),
        },
      ]);
    },
  );

  it("turns detailed monitoring off unless detailed_monitoring says otherwise (a bool: Terraform checks the type)", () => {
    expect(variables.detailed_monitoring).toMatchObject({ type: "bool", nullable: false, default: false });
  });

  it("checks the SSH key by preconditions of terraform_data.ssh_public_key, of a sensitive variable: nothing prints it", () => {
    expect(variables.ssh_public_key).toMatchObject({ sensitive: true });
    expect(variables.ssh_public_key.validation).toBeUndefined();
    const checks = json.resource?.terraform_data?.ssh_public_key?.lifecycle as {
      precondition: { condition: string; error_message: string }[];
    };
    expect(checks.precondition.map((check) => check.error_message)).toEqual(
      [
        "the public key, the one line",
        "an OpenSSH public key line",
        "the key's base64 as ssh-keygen",
        "a key whose data names",
        "a key of the length its type implies",
      ].map((start) =>
        expect.stringMatching(new RegExp(`^Invalid value for variable "ssh_public_key": expected ${start}[^\\n]*\\.$`)),
      ),
    );
    expect(checks.precondition[1].condition).toContain("^(ssh-ed25519|ssh-rsa) ");
    expect(checks.precondition[1].condition).not.toContain("ecdsa");
    expect(variables.ssh_public_key.description).toContain("not ECDSA");
  });

  it("checks that every ingress entry is an IPv4 CIDR block written with its network address, each once", () => {
    for (const name of ["ssh_ingress_cidrs", "app_ingress_cidrs"]) {
      expect(variables[name].validation).toEqual([
        {
          condition: expect.stringContaining(`try(cidrhost(cidr, 0) == split("/", cidr)[0], false)`),
          error_message:
            `Invalid value for variable "${name}": expected a non-empty list of IPv4 CIDR blocks written with their ` +
            'network address, such as ["203.0.113.0/24"] (10.0.0.0/8, not 10.0.0.1/8).',
        },
        {
          condition: expect.stringContaining(
            `length(distinct([for cidr in var.${name} : try(format("%s/%d", cidrhost(cidr, 0)`,
          ),
          error_message:
            `Invalid value for variable "${name}": expected each CIDR block once (10.0.0.0/8 and 10.0.0.0/08 are one block): ` +
            "AWS refuses a rule given twice.",
        },
      ]);
      expect(variables[name].description).toContain("not 10.0.0.1/8");
    }
  });

  it("takes the account's quota of inbound rules per security group, AWS's default unless raised, 1,000 at most", () => {
    expect(variables.inbound_rule_quota).toMatchObject({ type: "number", nullable: false, default: 60 });
    expect(variables.inbound_rule_quota.validation).toEqual([
      expect.objectContaining({
        condition:
          "${var.inbound_rule_quota == floor(var.inbound_rule_quota) && var.inbound_rule_quota >= 1 && var.inbound_rule_quota <= 1000}",
      }),
    ]);
  });

  it("reads the image's AMI id from the Parameter Store path in image_parameter, AL2023 (kernel 6.1, x86_64) by default", () => {
    expect(AL2023_KERNEL_6_1_X86_64_PARAMETER).toBe(
      "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64",
    );
    expect(variables.image_parameter).toMatchObject({
      type: "string",
      nullable: false,
      default: AL2023_KERNEL_6_1_X86_64_PARAMETER,
    });
    expect(variables.image_parameter.validation).toEqual([
      {
        condition: '${can(regex("^/[A-Za-z0-9_./-]+$", var.image_parameter))}',
        error_message:
          'Invalid value for variable "image_parameter": expected a Parameter Store path starting with / (letters, digits, _ . - /).',
      },
    ]);
    const arm = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64";
    expect(
      synthesize((scope) => new DeploymentVariables(scope, "inputs", { defaultImageParameter: arm })).json.variable
        ?.image_parameter.default,
    ).toBe(arm);
  });

  it("keeps the hosts' logs a year by default, and takes only the periods CloudWatch Logs takes", () => {
    expect(variables.log_retention_days).toMatchObject({ type: "number", nullable: false, default: 365 });
    expect(variables.log_retention_days.validation).toEqual([
      {
        condition: expect.stringContaining(
          "contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)",
        ),
        error_message: expect.stringMatching(
          /^Invalid value for variable "log_retention_days": expected one of 1, 3, .* days \(the retention periods CloudWatch Logs takes\)\.$/,
        ),
      },
    ]);
    expect(
      synthesize((scope) => new DeploymentVariables(scope, "inputs", { defaultLogRetentionDays: 30 })).json.variable
        ?.log_retention_days.default,
    ).toBe(30);
    expect(() =>
      synthesize((scope) => new DeploymentVariables(scope, "inputs", { defaultLogRetentionDays: 31 })),
    ).toThrow("DeploymentVariables: defaultLogRetentionDays must be one of 1, 3, 5");
  });
});
