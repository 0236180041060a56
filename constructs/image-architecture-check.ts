import { DataAwsAmi } from "@cdktf/provider-aws/lib/data-aws-ami";
import { DataAwsEc2InstanceType } from "@cdktf/provider-aws/lib/data-aws-ec2-instance-type";
import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Props of {@link ImageArchitectureCheck}. */
export interface ImageArchitectureCheckProps {
  /** The AMI id the instance boots from (read from the image parameter). */
  readonly imageId: string;
  /** The instance type that must run it. */
  readonly instanceType: string;
  /** The variable that names the image's Parameter Store path (`image_parameter`), named in the message. */
  readonly imageParameter: TerraformVariable;
  /**
   * Terraform name of both data sources (`data.aws_ami.<name>`, `data.aws_ec2_instance_type.<name>`):
   * {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * Stops the plan when the image is built for an architecture the instance type does not run (an
 * arm64 image on t3.micro, say), which EC2 would refuse only at apply: a postcondition of the AMI's
 * data source, comparing its `architecture` with the instance type's `supported_architectures`.
 */
export class ImageArchitectureCheck extends Construct {
  public readonly image: DataAwsAmi;
  public readonly instanceType: DataAwsEc2InstanceType;

  constructor(scope: Construct, id: string, props: ImageArchitectureCheckProps) {
    super(scope, id);
    const name = props.name ?? "crm_host";
    this.instanceType = new DataAwsEc2InstanceType(this, "instance_type", { instanceType: props.instanceType });
    nameElements(name, this.instanceType);
    // As text: cdktf refuses a list token inside a string, as in these expressions.
    const supported = `data.${this.instanceType.terraformResourceType}.${name}.supported_architectures`;
    const variable = props.imageParameter.friendlyUniqueId;
    this.image = new DataAwsAmi(this, "image", {
      // By its id, which names one image: no owner needed. A deprecated image still boots: find it too.
      filter: [{ name: "image-id", values: [props.imageId] }],
      includeDeprecated: true,
      lifecycle: {
        postcondition: [
          {
            condition: `\${contains(${supported}, self.architecture)}`,
            errorMessage:
              `Invalid value for variable "${variable}": expected the path of an image for an architecture that the ` +
              `instance type ${props.instanceType} runs (\${join(", ", ${supported})}); \${var.${variable}} gives \${self.id}, ` +
              "built for ${self.architecture}.",
          },
        ],
      },
    });
    nameElements(name, this.image);
  }
}
