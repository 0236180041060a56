import { HostSizingVariables } from "../../constructs/host-sizing-variables";
import { synthesize } from "../support/synth";

describe("HostSizingVariables", () => {
  const { json } = synthesize((scope) => new HostSizingVariables(scope, "sizing"));

  it("declares instance_type at the stack's root, t3.micro by default, with EC2's shape of a type", () => {
    expect(json.variable?.instance_type).toMatchObject({ type: "string", nullable: false, default: "t3.micro" });
    expect(json.variable?.instance_type.description).toContain("the plan checks that it runs the image's architecture");
    expect(json.variable?.instance_type.validation).toEqual([
      {
        condition: '${can(regex("^[a-z][a-z0-9-]*[.][a-z0-9]+$", var.instance_type))}',
        error_message:
          'Invalid value for variable "instance_type": expected an EC2 instance type such as t3.micro or m7i.large.',
      },
    ]);
  });

  it("declares root_volume_size_gib, 16 by default and never less (a root volume never shrinks), at most gp3's 65536", () => {
    expect(json.variable?.root_volume_size_gib).toMatchObject({ type: "number", nullable: false, default: 16 });
    expect(json.variable?.root_volume_size_gib.validation).toEqual([
      {
        condition: expect.stringContaining("var.root_volume_size_gib >= 16 && var.root_volume_size_gib <= 65536"),
        error_message:
          'Invalid value for variable "root_volume_size_gib": expected a whole number of GiB from 16 to 65536.',
      },
    ]);
  });

  it("leaves instance_type out for the scale-out topology, which has host_instance_type, and takes other defaults", () => {
    const { json: other } = synthesize(
      (scope) =>
        new HostSizingVariables(scope, "sizing", {
          instanceType: false,
          defaultRootVolumeSizeGiB: 20,
        }),
    );
    expect(Object.keys(other.variable ?? {})).toEqual(["root_volume_size_gib"]);
    expect(other.variable?.root_volume_size_gib.default).toBe(20);
    const { json: larger } = synthesize(
      (scope) => new HostSizingVariables(scope, "sizing", { defaultInstanceType: "t3.small" }),
    );
    expect(larger.variable?.instance_type.default).toBe("t3.small");
  });
});
