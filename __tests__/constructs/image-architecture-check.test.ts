import { DataAwsAmi } from "@cdktf/provider-aws/lib/data-aws-ami";
import { DataAwsEc2InstanceType } from "@cdktf/provider-aws/lib/data-aws-ec2-instance-type";
import { DeploymentVariables } from "../../constructs/deployment-variables";
import { ImageArchitectureCheck } from "../../constructs/image-architecture-check";
import { SsmImageParameter } from "../../constructs/ssm-image-parameter";
import { only, synthesize } from "../support/synth";

describe("ImageArchitectureCheck", () => {
  const { text, json } = synthesize((scope) => {
    const image = new SsmImageParameter(scope, "image", {
      parameterName: new DeploymentVariables(scope, "inputs").imageParameter,
    });
    new ImageArchitectureCheck(scope, "architecture", {
      imageId: image.imageId,
      instanceType: "t3.micro",
      imageParameter: image.parameterName,
    });
  });

  it("reads the image by its id (deprecated ones too) and the instance type's architectures", () => {
    expect(text).toHaveDataSourceWithProperties(DataAwsEc2InstanceType, { instance_type: "t3.micro" });
    expect(text).toHaveDataSourceWithProperties(DataAwsAmi, {
      filter: [{ name: "image-id", values: ["${data.aws_ssm_parameter.image.insecure_value}"] }],
      include_deprecated: true,
    });
    expect(Object.keys(json.data?.aws_ami ?? {})).toEqual(["crm_host"]);
    expect(Object.keys(json.data?.aws_ec2_instance_type ?? {})).toEqual(["crm_host"]);
  });

  it("stops the plan when the instance type does not run the image's architecture, naming the variable and both", () => {
    const [check] = only(json.data, "aws_ami").lifecycle.postcondition;
    expect(check.condition).toBe(
      "${contains(data.aws_ec2_instance_type.crm_host.supported_architectures, self.architecture)}",
    );
    expect(check.error_message).toBe(
      'Invalid value for variable "image_parameter": expected the path of an image for an architecture ' +
        'that the instance type t3.micro runs (${join(", ", data.aws_ec2_instance_type.crm_host.supported_architectures)}); ' +
        "${var.image_parameter} gives ${self.id}, built for ${self.architecture}.",
    );
  });
});
