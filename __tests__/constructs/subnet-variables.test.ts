import { SubnetVariables } from "../../constructs/subnet-variables";
import { synthesize } from "../support/synth";

describe("SubnetVariables", () => {
  const variables = synthesize((scope) => new SubnetVariables(scope, "subnet")).json.variable ?? {};

  it("requires subnet_id, without a default", () => {
    expect(variables.subnet_id).toMatchObject({ type: "string", nullable: false, description: expect.any(String) });
    expect(variables.subnet_id.default).toBeUndefined();
  });

  it("makes vpc_id and availability_zone optional (null: the subnet's, see SubnetPlacement), checked only when given", () => {
    for (const name of ["vpc_id", "availability_zone"]) {
      expect(variables[name]).toMatchObject({
        type: "string",
        nullable: true,
        default: null,
        description: expect.stringContaining("Optional: the subnet's"),
      });
      expect(variables[name].validation?.[0].condition).toMatch(
        new RegExp(`^\\$\\{var\\.${name} == null \\|\\| can\\(regex\\(`),
      );
    }
  });

  it.each([
    ["vpc_id", "^vpc-([0-9a-f]{8}|[0-9a-f]{17})$", "a VPC id"],
    ["subnet_id", "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$", "a subnet id"],
    [
      "availability_zone",
      "^[a-z]{2}(-[a-z]+)+-[0-9]+([a-z]|-[a-z]+-[0-9]+[a-z]|-wl[0-9]+-[a-z]+-wlz-[0-9]+)$",
      "an availability zone name",
    ],
  ])("validates %s against %s with a message naming it", (name, pattern, expected) => {
    const unset = ["vpc_id", "availability_zone"].includes(name) ? `var.${name} == null || ` : "";
    expect(variables[name].validation).toEqual([
      {
        condition: `\${${unset}can(regex("${pattern.replace(/\\/g, "\\\\")}", var.${name}))}`,
        error_message: expect.stringMatching(new RegExp(`^Invalid value for variable "${name}": expected ${expected}`)),
      },
    ]);
  });

  it("limits the availability zone to the stack's region when it is given, and refuses a bad region", () => {
    const regional =
      synthesize((scope) => new SubnetVariables(scope, "subnet", { region: "eu-west-3" })).json.variable ?? {};
    expect(regional.availability_zone.validation![0].condition).toContain('"^eu-west-3([a-z]|');
    expect(regional.availability_zone.validation![0].error_message).toContain("a zone of the stack's region eu-west-3");
    expect(() => synthesize((scope) => new SubnetVariables(scope, "subnet", { region: "eu-west-3.*" }))).toThrow(
      'region "eu-west-3.*" is not a region name',
    );
  });
});
