import { EbsVolume } from "@cdktf/provider-aws/lib/ebs-volume";
import { VolumeAttachment } from "@cdktf/provider-aws/lib/volume-attachment";
import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { SNAPSHOT_ID_EXPECTED, SNAPSHOT_ID_SHAPE } from "../settings/snapshot-id";
import { MAX_GP3_SIZE_GIB } from "./constants";
import { matchesPattern, stackVariable, wholeNumberBetween } from "./variable-rules";

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
   * Size used when `data_volume_size_gib` is not set.
   * @default DEFAULT_DATA_VOLUME_SIZE_GIB (10)
   */
  readonly defaultSizeGiB?: number;
  /**
   * Terraform name of the volume and its attachment (`aws_ebs_volume.<name>`, `aws_volume_attachment.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_data"
   */
  readonly name?: string;
}

/**
 * The EBS volume that holds MariaDB's data directory, so the database outlives any host: gp3,
 * encrypted, in the instance's availability zone, kept on `terraform destroy` unless the
 * settings opt in, with a final snapshot whenever it is deleted. Declares the variables
 * `data_volume_size_gib` and `data_volume_snapshot_id` (restore from a snapshot).
 *
 * The volume does not depend on the instance: its id can be rendered into the instance's user
 * data (the script finds the disk by it), and {@link attachTo} joins the two afterwards.
 */
export class DataVolume extends Construct {
  /** `data_volume_size_gib`: size of the volume in GiB. */
  public readonly sizeGiB: TerraformVariable;
  /** `data_volume_snapshot_id`: snapshot the volume is created from, or "" for an empty volume. */
  public readonly snapshotId: TerraformVariable;
  public readonly volume: EbsVolume;
  private readonly name: string;

  constructor(scope: Construct, id: string, props: DataVolumeProps) {
    super(scope, id);
    this.sizeGiB = stackVariable(this, "data_volume_size_gib", {
      type: "number",
      nullable: false,
      default: props.defaultSizeGiB ?? DEFAULT_DATA_VOLUME_SIZE_GIB,
      description: "Size in GiB of the encrypted gp3 volume that holds the database. It can grow in place, never shrink.",
    });
    this.sizeGiB.addValidation(wholeNumberBetween(this.sizeGiB, 1, MAX_GP3_SIZE_GIB, "GiB"));

    this.snapshotId = stackVariable(this, "data_volume_snapshot_id", {
      type: "string",
      nullable: false,
      default: "",
      description:
        "Snapshot to create the data volume from (restore, see docs/operations.md), e.g. snap-0123456789abcdef0; " +
        "empty for a new, empty volume. Changing it replaces the volume: follow the restore procedure of docs/operations.md.",
    });
    this.snapshotId.addValidation(matchesPattern(this.snapshotId, `^(${SNAPSHOT_ID_SHAPE})?$`, `empty, or ${SNAPSHOT_ID_EXPECTED}`));

    const snapshot = this.snapshotId.friendlyUniqueId;
    this.volume = new EbsVolume(this, "volume", {
      availabilityZone: props.availabilityZone,
      type: "gp3",
      encrypted: true,
      size: this.sizeGiB.numberValue,
      snapshotId: `\${var.${snapshot} == "" ? null : var.${snapshot}}`,
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
