import { TerraformStack, Testing } from "cdktf";
import { StateBackend, StateBackendProps } from "../../constructs/state-backend";

/** The `terraform` block of a stack named `name` holding only the backend. */
function terraformBlock(props: StateBackendProps, name = "Prod"): any {
  const stack = new TerraformStack(Testing.app(), name);
  new StateBackend(stack, "state", props);
  return JSON.parse(Testing.synth(stack)).terraform;
}

describe("StateBackend", () => {
  it("keeps local state in the project directory by default, as a path relative to the stack's directory", () => {
    expect(terraformBlock({ settings: { type: "local" }, defaultRegion: "us-east-1" }).backend).toEqual({
      local: { path: "../../../terraform.Prod.tfstate" },
    });
  });

  it("takes a local path as given", () => {
    expect(
      terraformBlock({ settings: { type: "local", path: "state/prod.tfstate" }, defaultRegion: "us-east-1" }).backend,
    ).toEqual({ local: { path: "state/prod.tfstate" } });
  });

  it("encrypts S3 state and locks it with S3's lock file, one key per stack, in the stack's region by default", () => {
    expect(
      terraformBlock({ settings: { type: "s3", bucket: "crm-state" }, defaultRegion: "eu-west-1" }).backend,
    ).toEqual({
      s3: {
        bucket: "crm-state",
        key: "Prod/terraform.tfstate",
        region: "eu-west-1",
        encrypt: true,
        use_lockfile: true,
      },
    });
  });

  it("passes every S3 option through, with use_lockfile as a boolean and no DynamoDB table", () => {
    const kms = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const s3 = terraformBlock({
      settings: {
        type: "s3",
        bucket: "crm-state",
        key: "crm/prod.tfstate",
        region: "eu-central-1",
        kmsKeyId: kms,
        workspaceKeyPrefix: "ws",
      },
      defaultRegion: "us-east-1",
    }).backend.s3;
    expect(s3).toEqual({
      bucket: "crm-state",
      key: "crm/prod.tfstate",
      region: "eu-central-1",
      encrypt: true,
      kms_key_id: kms,
      workspace_key_prefix: "ws",
      use_lockfile: true,
    });
    expect(s3.use_lockfile).toBe(true);
    expect(Object.keys(s3)).not.toContain("dynamodb_table");
  });

  it("is the stack's only backend", () => {
    const terraform = terraformBlock({ settings: { type: "s3", bucket: "crm-state" }, defaultRegion: "us-east-1" });
    expect(Object.keys(terraform.backend)).toEqual(["s3"]);
  });
});
