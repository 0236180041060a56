import { EbsVolume } from "@cdktf/provider-aws/lib/ebs-volume";
import { VolumeAttachment } from "@cdktf/provider-aws/lib/volume-attachment";
import {
  DATA_VOLUME_DEVICE_NAME,
  DataVolume,
  DataVolumeProps,
  DEFAULT_DATA_VOLUME_SIZE_GIB,
} from "../../constructs/data-volume";
import { DataVolumeVariables } from "../../constructs/data-volume-variables";
import { only, synthesize } from "../support/synth";

const props: DataVolumeProps = { availabilityZone: "us-east-1a", nameTag: "CrmHostStack/CrmServer/data" };

describe("DataVolume", () => {
  // As the single host builds it: its size and snapshot from DataVolumeVariables.
  const { text, json } = synthesize((scope) => {
    const inputs = new DataVolumeVariables(scope, "data_volume_inputs");
    new DataVolume(scope, "data", {
      ...props,
      tags: { Backup: "b" },
      sizeGiB: inputs.sizeGiB.numberValue,
      snapshotId: inputs.snapshotId,
    });
  });
  const volume = only(json.resource, "aws_ebs_volume");

  it("is an encrypted gp3 volume in the instance's zone, tagged with the stack and instance names", () => {
    expect(text).toHaveResourceWithProperties(EbsVolume, {
      availability_zone: "us-east-1a",
      type: "gp3",
      encrypted: true,
      size: "${var.data_volume_size_gib}",
      tags: { Name: "CrmHostStack/CrmServer/data", Backup: "b" },
    });
  });

  it("survives terraform destroy and replacement by default, and is snapshotted whenever it is deleted", () => {
    expect(volume.lifecycle).toEqual({ prevent_destroy: true });
    expect(volume.final_snapshot).toBe(true);
    const optedIn = only(
      synthesize((scope) => new DataVolume(scope, "data", { ...props, preventDestroy: false })).json.resource,
      "aws_ebs_volume",
    );
    expect(optedIn.lifecycle).toEqual({ prevent_destroy: false });
    expect(optedIn.final_snapshot).toBe(true);
  });

  it("takes its size from the size it is given (data_volume_size_gib in the stack), 10 GiB by default", () => {
    const plain = only(synthesize((scope) => new DataVolume(scope, "data", props)).json.resource, "aws_ebs_volume");
    expect(plain.size).toBe(DEFAULT_DATA_VOLUME_SIZE_GIB);
    expect(
      only(
        synthesize((scope) => new DataVolume(scope, "data", { ...props, sizeGiB: 50 })).json.resource,
        "aws_ebs_volume",
      ).size,
    ).toBe(50);
    // A literal size gets the variable's rule at synthesis.
    expect(() => synthesize((scope) => new DataVolume(scope, "data", { ...props, sizeGiB: 1.5 }))).toThrow(
      "DataVolume: sizeGiB must be a whole number of GiB from 1 to 65536, got 1.5",
    );
  });

  it("is created empty, or from the snapshot named by the variable it is given (data_volume_snapshot_id: restore)", () => {
    expect(volume.snapshot_id).toBe('${var.data_volume_snapshot_id == "" ? null : var.data_volume_snapshot_id}');
    expect(
      only(synthesize((scope) => new DataVolume(scope, "data", props)).json.resource, "aws_ebs_volume").snapshot_id,
    ).toBeUndefined();
  });

  it("does not depend on any instance, so its id can go into the instance's user data", () => {
    expect(JSON.stringify(volume)).not.toMatch(/aws_instance/);
    expect(json.resource?.aws_volume_attachment).toBeUndefined();
  });

  it("attaches to an instance as /dev/sdf, stopping the instance before any detach", () => {
    const { text: attached, json: withAttachment } = synthesize((scope) => {
      new DataVolume(scope, "data", props).attachTo("i-0123456789abcdef0");
    });
    const volumeName = Object.keys(withAttachment.resource!.aws_ebs_volume)[0];
    expect(DATA_VOLUME_DEVICE_NAME).toBe("/dev/sdf");
    expect(attached).toHaveResourceWithProperties(VolumeAttachment, {
      device_name: "/dev/sdf",
      instance_id: "i-0123456789abcdef0",
      volume_id: `\${aws_ebs_volume.${volumeName}.id}`,
      stop_instance_before_detaching: true,
    });
    expect(only(withAttachment.resource, "aws_volume_attachment").force_detach).toBeUndefined();
  });
});
