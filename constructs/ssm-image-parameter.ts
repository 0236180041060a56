import { DataAwsSsmParameter } from "@cdktf/provider-aws/lib/data-aws-ssm-parameter";
import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Parameter Store path of the newest Amazon Linux 2023 AMI, kernel 6.1, x86_64. */
export const AL2023_KERNEL_6_1_X86_64_PARAMETER = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64";

/** Props of {@link SsmImageParameter}. */
export interface SsmImageParameterProps {
  /** The variable holding the Parameter Store path (DeploymentVariables' `image_parameter`). */
  readonly parameterName: TerraformVariable;
  /**
   * Terraform name of the data source (`data.aws_ssm_parameter.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "image"
   */
  readonly name?: string;
}

/**
 * The image parameter of docs/original-stack.md §2.3: a data source that reads the AMI id stored at plan time
 * under the Parameter Store path a variable holds, as CloudFormation's
 * `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>` did. The image moves with AWS's newest release.
 */
export class SsmImageParameter extends Construct {
  /** The variable holding the parameter path. */
  public readonly parameterName: TerraformVariable;
  /** The data source reading the parameter. */
  public readonly parameter: DataAwsSsmParameter;
  /** The AMI id read from Parameter Store. */
  public readonly imageId: string;

  constructor(scope: Construct, id: string, props: SsmImageParameterProps) {
    super(scope, id);
    this.parameterName = props.parameterName;
    this.parameter = new DataAwsSsmParameter(this, "parameter", { name: this.parameterName.stringValue });
    nameElements(props.name ?? "image", this.parameter);
    // AMI ids are public: the non-sensitive attribute keeps them readable in plans.
    this.imageId = this.parameter.insecureValue;
  }
}
