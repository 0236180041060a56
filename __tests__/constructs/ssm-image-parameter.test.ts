import { DataAwsSsmParameter } from "@cdktf/provider-aws/lib/data-aws-ssm-parameter";
import { AL2023_KERNEL_6_1_X86_64_PARAMETER, SsmImageParameter } from "../../constructs/ssm-image-parameter";
import { synthesize } from "../support/synth";

describe("SsmImageParameter", () => {
  it("reads the AMI id from the path held in the image_parameter variable (AL2023, kernel 6.1, x86_64 by default)", () => {
    let imageId = "";
    const { text, json } = synthesize((scope) => { imageId = new SsmImageParameter(scope, "image").imageId; });
    expect(AL2023_KERNEL_6_1_X86_64_PARAMETER).toBe("/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64");
    expect(json.variable?.image_parameter).toMatchObject({ type: "string", default: AL2023_KERNEL_6_1_X86_64_PARAMETER });
    expect(text).toHaveDataSourceWithProperties(DataAwsSsmParameter, { name: "${var.image_parameter}" });
    expect(imageId).toContain("TfToken");
  });

  it("validates the path and takes another variable name and default", () => {
    const { json } = synthesize((scope) => new SsmImageParameter(scope, "image", {
      variableName: "arm_image", defaultParameterName: "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64",
    }));
    const variable = json.variable?.arm_image;
    expect(variable?.default).toBe("/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64");
    expect(variable?.validation).toEqual([{
      condition: '${can(regex("^/[A-Za-z0-9_./-]+$", var.arm_image))}',
      error_message: 'Invalid value for variable "arm_image": expected a Parameter Store path starting with / (letters, digits, _ . - /).',
    }]);
  });
});
