import { EbsVolume } from "@cdktf/provider-aws/lib/ebs-volume";
import { VolumeAttachment } from "@cdktf/provider-aws/lib/volume-attachment";
import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { MAX_GP3_SIZE_GIB } from "./constants";
import { checkLiteral, variableReference, wholeFrom } from "./variable-rules";

/**
 * Default size of the data volume, in GiB. A new MariaDB data directory and a CRM's tables of a few
 * hundred thousand rows stay well under 1 GiB (the figures: docs/architecture.md); 10 GiB leaves room
 * for years of growth, binary logs or a dump beside the data; gp3 performance does not depend on size. It grows in place
 * (`data_volume_size_gib`, then `xfs_growfs`), never shrinks.
 */
export const DEFAULT_DATA_VOLUME_SIZE_GIB = 10;

export { MAX_GP3_SIZE_GIB };

/**
 * Device name of the attachment. On Nitro instances (t3) the kernel names the disk nvme1n1
 * whatever is asked; Amazon Linux's udev rules add this name as a symlink, and the volume id
 * is the NVMe serial (`/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol…`).
 */
export const DATA_VOLUME_DEVICE_NAME = "/dev/sdf";

/** Props of {@link DataVolume}. */
export interface DataVolumeProps {
  /** AvailabilityZone of the instance the volume is attached to (EBS volumes are zonal). */
  readonly availabilityZone: string;
  /** Value of the Name tag, e.g. `<stack_name>/<instance_name>/data`. */
  readonly nameTag: string;
  /** Further tags, e.g. the ones the snapshot policy targets. @default - none */
  readonly tags?: Record<string, string>;
  /**
   * Whether `terraform destroy` (and any plan that would replace the volume) is refused while
   * the volume is in the configuration (`lifecycle.prevent_destroy`). A synthesis-time choice:
   * Terraform takes only literal values there.
   * @default true
   */
  readonly preventDestroy?: boolean;
  /**
   * Size of the volume in GiB: DataVolumeVariables' `data_volume_size_gib`, or a whole number up to MAX_GP3_SIZE_GIB.
   * @default DEFAULT_DATA_VOLUME_SIZE_GIB (10)
   */
  readonly sizeGiB?: number;
  /**
   * The variable naming the snapshot the volume is created from, "" for none (DataVolumeVariables' `data_volume_snapshot_id`).
   * @default - an empty volume
   */
  readonly snapshotId?: TerraformVariable;
  /**
   * Terraform name of the volume and its attachment (`aws_ebs_volume.<name>`, `aws_volume_attachment.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_data"
   */
  readonly name?: string;
}

/**
 * The EBS volume that holds MariaDB's data directory, so the database outlives any host: gp3,
 * encrypted, in the instance's availability zone, kept on `terraform destroy` unless the
 * settings opt in, with a final snapshot whenever it is deleted. Its size and the snapshot it is restored
 * from are DataVolumeVariables' `data_volume_size_gib` and `data_volume_snapshot_id` in the stack.
 *
 * The volume does not depend on the instance: its id can be rendered into the instance's user
 * data (the script finds the disk by it), and {@link attachTo} joins the two afterwards.
 */
export class DataVolume extends Construct {
  public readonly volume: EbsVolume;
  private readonly name: string;

  constructor(scope: Construct, id: string, props: DataVolumeProps) {
    super(scope, id);
    const size = props.sizeGiB ?? DEFAULT_DATA_VOLUME_SIZE_GIB;
    checkLiteral(
      size,
      wholeFrom(1, MAX_GP3_SIZE_GIB),
      "DataVolume: sizeGiB",
      `a whole number of GiB from 1 to ${MAX_GP3_SIZE_GIB}`,
    );
    const snapshot = props.snapshotId && variableReference(props.snapshotId);
    this.volume = new EbsVolume(this, "volume", {
      availabilityZone: props.availabilityZone,
      type: "gp3",
      encrypted: true,
      size,
      snapshotId: snapshot && `\${${snapshot} == "" ? null : ${snapshot}}`,
      // Whenever the volume is deleted after all (opted in, or replaced), AWS snapshots it first.
      finalSnapshot: true,
      tags: { ...props.tags, Name: props.nameTag },
      lifecycle: { preventDestroy: props.preventDestroy ?? true },
    });
    this.name = props.name ?? "crm_data";
    nameElements(this.name, this.volume);
  }

  /** Volume id (`vol-…`), known before any instance exists. */
  public get volumeId(): string {
    return this.volume.id;
  }

  /**
   * Attaches the volume to an instance as {@link DATA_VOLUME_DEVICE_NAME}. On detach (host
   * replacement, destroy) the provider stops the instance first, so MariaDB shuts down cleanly
   * and the file system is unmounted before the disk goes away.
   */
  public attachTo(instanceId: string): VolumeAttachment {
    const attachment = new VolumeAttachment(this, "attachment", {
      deviceName: DATA_VOLUME_DEVICE_NAME,
      volumeId: this.volume.id,
      instanceId,
      stopInstanceBeforeDetaching: true,
    });
    nameElements(this.name, attachment);
    return attachment;
  }
}
