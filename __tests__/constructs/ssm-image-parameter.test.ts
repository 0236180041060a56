import { DataAwsSsmParameter } from "@cdktf/provider-aws/lib/data-aws-ssm-parameter";
import { DeploymentVariables } from "../../constructs/deployment-variables";
import { SsmImageParameter } from "../../constructs/ssm-image-parameter";
import { synthesize } from "../support/synth";

describe("SsmImageParameter", () => {
  it("reads the AMI id from the path held in the variable it is given (DeploymentVariables' image_parameter)", () => {
    let imageId = "";
    const { text, json } = synthesize((scope) => {
      imageId = new SsmImageParameter(scope, "image", {
        parameterName: new DeploymentVariables(scope, "inputs").imageParameter,
      }).imageId;
    });
    expect(text).toHaveDataSourceWithProperties(DataAwsSsmParameter, { name: "${var.image_parameter}" });
    expect(Object.keys(json.data?.aws_ssm_parameter ?? {})).toEqual(["image"]);
    expect(imageId).toContain("TfToken");
  });
});
