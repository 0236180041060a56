import { DeploymentVariables } from "../../constructs/deployment-variables";
import { synthesize } from "../support/synth";

describe("DeploymentVariables", () => {
  const { json } = synthesize((scope) => new DeploymentVariables(scope, "inputs"));
  const variables = json.variable ?? {};

  it("declares the per-account values under their own names, without defaults", () => {
    for (const name of ["vpc_id", "subnet_id", "availability_zone", "key_pair_name", "ssh_public_key"]) {
      expect(variables[name]).toMatchObject({ type: "string", nullable: false, description: expect.any(String) });
      expect(variables[name].default).toBeUndefined();
    }
  });

  it("lets SSH and the application ports be narrowed, open to every address by default", () => {
    expect(variables.ssh_ingress_cidrs).toMatchObject({ type: "list(string)", default: ["0.0.0.0/0"] });
    expect(variables.app_ingress_cidrs).toMatchObject({ type: "list(string)", default: ["0.0.0.0/0"] });
    const narrowed = synthesize((scope) => new DeploymentVariables(scope, "inputs", {
      defaultSshIngressCidrs: ["203.0.113.0/24"], defaultAppIngressCidrs: ["198.51.100.0/24"],
    })).json.variable ?? {};
    expect(narrowed.ssh_ingress_cidrs.default).toEqual(["203.0.113.0/24"]);
    expect(narrowed.app_ingress_cidrs.default).toEqual(["198.51.100.0/24"]);
  });

  it.each([
    ["vpc_id", "^vpc-([0-9a-f]{8}|[0-9a-f]{17})$", "a VPC id"],
    ["subnet_id", "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$", "a subnet id"],
    ["availability_zone", "^[a-z]{2}(-[a-z]+)+-[0-9]+[a-z]$", "an availability zone name"],
    ["key_pair_name", "^[ -~]{1,255}$", "a key pair name"],
  ])("validates %s against %s with a message naming it", (name, pattern, expected) => {
    expect(variables[name].validation).toEqual([{
      condition: `\${can(regex("${pattern.replace(/\\/g, "\\\\")}", var.${name}))}`,
      error_message: expect.stringMatching(new RegExp(`^Invalid value for variable "${name}": expected ${expected}`)),
    }]);
  });

  it("turns detailed monitoring off unless detailed_monitoring says otherwise (a bool: Terraform checks the type)", () => {
    expect(variables.detailed_monitoring).toMatchObject({ type: "bool", nullable: false, default: false });
  });

  it("checks the public key format and that every ingress entry is an IPv4 CIDR block", () => {
    expect(variables.ssh_public_key.validation[0].condition).toContain("ssh-ed25519");
    for (const name of ["ssh_ingress_cidrs", "app_ingress_cidrs"]) {
      expect(variables[name].validation).toEqual([{
        condition: expect.stringContaining(`alltrue([for cidr in var.${name} : can(cidrhost(cidr, 0))`),
        error_message: `Invalid value for variable "${name}": expected a non-empty list of IPv4 CIDR blocks such as ["203.0.113.0/24"].`,
      }]);
    }
  });
});
