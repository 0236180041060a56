import { DeploymentVariables } from "../../constructs/deployment-variables";
import { synthesize } from "../support/synth";

describe("DeploymentVariables", () => {
  const { json } = synthesize((scope) => new DeploymentVariables(scope, "inputs"));
  const variables = json.variable ?? {};

  it("declares the per-account values under their own names, without defaults", () => {
    for (const name of ["subnet_id", "key_pair_name", "ssh_public_key"]) {
      expect(variables[name]).toMatchObject({ type: "string", nullable: false, description: expect.any(String) });
      expect(variables[name].default).toBeUndefined();
    }
  });

  it("makes vpc_id and availability_zone optional (null: the subnet's, see SubnetPlacement), checked only when given", () => {
    for (const name of ["vpc_id", "availability_zone"]) {
      expect(variables[name]).toMatchObject({ type: "string", nullable: true, default: null, description: expect.stringContaining("Optional: the subnet's") });
      expect(variables[name].validation?.[0].condition).toMatch(new RegExp(`^\\$\\{var\\.${name} == null \\|\\| can\\(regex\\(`));
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
    ["availability_zone", "^[a-z]{2}(-[a-z]+)+-[0-9]+([a-z]|-[a-z]+-[0-9]+[a-z]|-wl[0-9]+-[a-z]+-wlz-[0-9]+)$",
      "an availability zone name"],
    ["key_pair_name", "^[!-~]([ -~]{0,253}[!-~])?$", "a key pair name"],
  ])("validates %s against %s with a message naming it", (name, pattern, expected) => {
    const unset = ["vpc_id", "availability_zone"].includes(name) ? `var.${name} == null || ` : "";
    expect(variables[name].validation).toEqual([{
      condition: `\${${unset}can(regex("${pattern.replace(/\\/g, "\\\\")}", var.${name}))}`,
      error_message: expect.stringMatching(new RegExp(`^Invalid value for variable "${name}": expected ${expected}`)),
    }]);
  });

  it("turns detailed monitoring off unless detailed_monitoring says otherwise (a bool: Terraform checks the type)", () => {
    expect(variables.detailed_monitoring).toMatchObject({ type: "bool", nullable: false, default: false });
  });

  it("accepts only the key types EC2 imports, RSA and ED25519, each with the blob of its type", () => {
    const condition: string = variables.ssh_public_key.validation![0].condition;
    expect(condition).toContain("(ssh-rsa AAAAB3NzaC1yc2E|ssh-ed25519 AAAAC3NzaC1lZDI1NTE5)");
    expect(condition).not.toContain("ecdsa");
    expect(variables.ssh_public_key.description).toContain("not ECDSA");
  });

  it("checks that every ingress entry is an IPv4 CIDR block written with its network address", () => {
    for (const name of ["ssh_ingress_cidrs", "app_ingress_cidrs"]) {
      expect(variables[name].validation).toEqual([{
        condition: expect.stringContaining(`try(cidrhost(cidr, 0) == split("/", cidr)[0], false)`),
        error_message: `Invalid value for variable "${name}": expected a non-empty list of IPv4 CIDR blocks written with their ` +
          'network address, such as ["203.0.113.0/24"] (10.0.0.0/8, not 10.0.0.1/8).',
      }]);
      expect(variables[name].description).toContain("not 10.0.0.1/8");
    }
  });

  it("limits the availability zone to the stack's region when it is given, and refuses a bad region", () => {
    const regional = synthesize((scope) => new DeploymentVariables(scope, "inputs", { region: "eu-west-3" })).json.variable ?? {};
    expect(regional.availability_zone.validation![0].condition).toContain('"^eu-west-3([a-z]|');
    expect(regional.availability_zone.validation![0].error_message).toContain("a zone of the stack's region eu-west-3");
    expect(() => synthesize((scope) => new DeploymentVariables(scope, "inputs", { region: "eu-west-3.*" })))
      .toThrow('region "eu-west-3.*" is not a region name');
  });
});
