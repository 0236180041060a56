import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import {
  INSTANCE_TYPE,
  INSTANCE_TYPE_EXPECTED,
  INSTANCE_TYPE_PATTERN,
  MAX_GP3_SIZE_GIB,
  ROOT_VOLUME_SIZE_GIB,
} from "./constants";
import { matchesPattern, stackVariable, wholeNumberBetween } from "./variable-rules";

/** Props of {@link HostSizingVariables}. */
export interface HostSizingVariablesProps {
  /**
   * Whether to declare `instance_type` (the single host's); the scale-out topology has its own `host_instance_type`.
   * @default true
   */
  readonly instanceType?: boolean;
  /**
   * Default of `instance_type`.
   * @default INSTANCE_TYPE ("t3.micro", the original stack's)
   */
  readonly defaultInstanceType?: string;
  /**
   * Default of `root_volume_size_gib`, also its smallest value (a root volume never shrinks).
   * @default ROOT_VOLUME_SIZE_GIB (16)
   */
  readonly defaultRootVolumeSizeGiB?: number;
}

/**
 * How big the hosts are, as Terraform variables with validation blocks: `instance_type` (the single host;
 * ImageArchitectureCheck compares it with the image's architecture at plan) and `root_volume_size_gib`
 * (the encrypted gp3 root volume of the single host or of every scale-out host). The data volume's size is
 * DataVolumeVariables' `data_volume_size_gib`. Defaults are the original stack's: the synthesized stack is unchanged
 * without them.
 */
export class HostSizingVariables extends Construct {
  /** `instance_type`: the single host's EC2 instance type, when declared. */
  public readonly instanceType?: TerraformVariable;
  /** `root_volume_size_gib`: size of the hosts' root volume in GiB. */
  public readonly rootVolumeSizeGiB: TerraformVariable;

  constructor(scope: Construct, id: string, props: HostSizingVariablesProps = {}) {
    super(scope, id);
    if (props.instanceType ?? true) {
      const fallback = props.defaultInstanceType ?? INSTANCE_TYPE;
      this.instanceType = stackVariable(this, "instance_type", {
        type: "string",
        nullable: false,
        default: fallback,
        description:
          `The host's EC2 instance type (the original stack's ${fallback} by default); the plan checks ` +
          "that it runs the image's architecture. A change stops and starts the host " +
          "(a few minutes without the app); its addresses and volumes stay.",
      });
      this.instanceType.addValidation(matchesPattern(this.instanceType, INSTANCE_TYPE_PATTERN, INSTANCE_TYPE_EXPECTED));
    }
    const smallest = props.defaultRootVolumeSizeGiB ?? ROOT_VOLUME_SIZE_GIB;
    this.rootVolumeSizeGiB = stackVariable(this, "root_volume_size_gib", {
      type: "number",
      nullable: false,
      default: smallest,
      description:
        `Size in GiB of the hosts' encrypted gp3 root volume (OS, swap file, app; ${smallest} by default and at least that). ` +
        "It grows in place, never shrinks; the file system takes the new size at the next boot (cloud-init's growpart and resizefs).",
    });
    this.rootVolumeSizeGiB.addValidation(wholeNumberBetween(this.rootVolumeSizeGiB, smallest, MAX_GP3_SIZE_GIB, "GiB"));
  }
}
