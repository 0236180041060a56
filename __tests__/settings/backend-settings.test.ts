import { spawnSync } from "child_process";
import { resolve } from "path";
import { localStateFile } from "../../settings/backend-settings";
import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";

const withBackend = (backend: unknown) => parseStackSettings({ ...exampleSettings, backend });
const KMS = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";

describe("backend setting", () => {
  it("is local by default, with the construct's default path", () => {
    expect(parseStackSettings(exampleSettings).backend).toEqual({ type: "local", path: undefined });
    expect(withBackend({}).backend).toEqual({ type: "local", path: undefined });
    expect(withBackend({ type: "local", path: "../../../state/dev.tfstate" }).backend).toEqual({
      type: "local",
      path: "../../../state/dev.tfstate",
    });
  });

  it("takes S3 with every option", () => {
    expect(
      withBackend({
        type: "s3",
        bucket: "crm-host-tfstate-123456789012",
        key: "crm/prod/terraform.tfstate",
        region: "eu-west-1",
        kmsKeyId: KMS,
        workspaceKeyPrefix: "workspaces",
      }).backend,
    ).toEqual({
      type: "s3",
      bucket: "crm-host-tfstate-123456789012",
      key: "crm/prod/terraform.tfstate",
      region: "eu-west-1",
      kmsKeyId: KMS,
      workspaceKeyPrefix: "workspaces",
    });
    expect(withBackend({ type: "s3", bucket: "crm.state" }).backend).toMatchObject({ type: "s3", bucket: "crm.state" });
    expect(
      withBackend({ type: "s3", bucket: "crm-state", kmsKeyId: "arn:aws:kms:us-east-1:123456789012:alias/terraform" })
        .backend,
    ).toMatchObject({ kmsKeyId: "arn:aws:kms:us-east-1:123456789012:alias/terraform" });
  });

  it.each<[string, unknown, RegExp]>([
    ["an unknown type", { type: "gcs" }, /Invalid setting "backend.type" \(got "gcs"\): expected "local" or "s3"/],
    [
      "S3 without a bucket",
      { type: "s3" },
      /Invalid setting "backend.bucket": expected the bucket of the state \(required with an s3 backend\)/,
    ],
    [
      "a bucket on a local backend",
      { bucket: "crm-state" },
      /Invalid setting "backend.bucket" \(got "crm-state"\): expected no bucket with a local backend/,
    ],
    [
      "a KMS key on a local backend",
      { type: "local", kmsKeyId: KMS },
      /Invalid setting "backend.kmsKeyId".*expected no kmsKeyId with a local backend/,
    ],
    [
      "a path on S3",
      { type: "s3", bucket: "crm-state", path: "x.tfstate" },
      /Invalid setting "backend.path" \(got "x.tfstate"\): expected no path with an s3 backend/,
    ],
    [
      "an upper-case bucket",
      { type: "s3", bucket: "CRM-State" },
      /Invalid setting "backend.bucket" \(got "CRM-State"\): expected an S3 bucket name/,
    ],
    [
      "a two-letter bucket",
      { type: "s3", bucket: "ab" },
      /Invalid setting "backend.bucket".*expected an S3 bucket name/,
    ],
    [
      "a bucket like an IP address",
      { type: "s3", bucket: "192.168.1.10" },
      /Invalid setting "backend.bucket".*expected an S3 bucket name/,
    ],
    [
      "a key starting with /",
      { type: "s3", bucket: "crm-state", key: "/prod.tfstate" },
      /Invalid setting "backend.key".*expected an S3 object key/,
    ],
    [
      "a key ending with /",
      { type: "s3", bucket: "crm-state", key: "prod/" },
      /Invalid setting "backend.key".*expected an S3 object key/,
    ],
    [
      "a key with a space",
      { type: "s3", bucket: "crm-state", key: "my state" },
      /Invalid setting "backend.key".*expected an S3 object key/,
    ],
    [
      "a bad region",
      { type: "s3", bucket: "crm-state", region: "Europe" },
      /Invalid setting "backend.region" \(got "Europe"\): expected an AWS region name/,
    ],
    [
      "a key id instead of an ARN",
      { type: "s3", bucket: "crm-state", kmsKeyId: "1234abcd-12ab-34cd-56ef-1234567890ab" },
      /Invalid setting "backend.kmsKeyId".*expected the ARN of a KMS key or alias/,
    ],
    [
      "a prefix ending with /",
      { type: "s3", bucket: "crm-state", workspaceKeyPrefix: "env/" },
      /Invalid setting "backend.workspaceKeyPrefix".*expected a key prefix/,
    ],
    [
      "an absolute local path",
      { path: "/var/lib/terraform.tfstate" },
      /Invalid setting "backend.path".*expected a relative path ending in .tfstate/,
    ],
    [
      "a local path that is no state file",
      { path: "state.json" },
      /Invalid setting "backend.path".*expected a relative path ending in .tfstate/,
    ],
    [
      "an unknown option",
      { type: "s3", bucket: "crm-state", dynamodbTable: "locks" },
      /Invalid setting "backend.dynamodbTable": expected one of the known settings \(type, path, bucket, key, region, kmsKeyId, workspaceKeyPrefix\)/,
    ],
    ["a string", "s3", /Invalid setting "backend": expected a JSON object/],
    // cdktf deletes the stack folders of cdktf.out that a synthesis did not produce.
    [
      "a local state in the stack's folder",
      { path: "terraform.tfstate" },
      /^Invalid setting "backend.path" \(got "terraform.tfstate"\): expected a state file outside cdktf.out, which cdktf cleans .*start it with \.\.\/\.\.\/\.\.\//,
    ],
    [
      "a local state in cdktf.out",
      { path: "../../dev.tfstate" },
      /Invalid setting "backend.path" \(got "..\/..\/dev.tfstate"\): expected a state file outside cdktf.out/,
    ],
    [
      "a local state in another stack's folder",
      { path: "../Other/terraform.tfstate" },
      /expected a state file outside cdktf.out/,
    ],
    [
      "a local state back into cdktf.out",
      { path: "../../../cdktf.out/dev.tfstate" },
      /expected a state file outside cdktf.out/,
    ],
    // S3 encrypts with a key of the bucket's own region and partition.
    [
      "a KMS key of another region than the bucket's",
      { type: "s3", bucket: "crm-state", region: "us-west-2", kmsKeyId: KMS },
      /^Invalid setting "backend.kmsKeyId" \(got "arn:aws:kms:eu-west-1:.*"\): expected a KMS key in the bucket's region, us-west-2 \(an ARN starting arn:aws:kms:us-west-2:\): S3 encrypts only with a key of its own region\.$/,
    ],
    [
      "a KMS key of another region than the stack's (the bucket's by default)",
      { type: "s3", bucket: "crm-state", kmsKeyId: KMS },
      /Invalid setting "backend.kmsKeyId".*expected a KMS key in the bucket's region, us-east-1/,
    ],
    [
      "a KMS key of another partition",
      {
        type: "s3",
        bucket: "crm-state",
        region: "cn-north-1",
        kmsKeyId: "arn:aws:kms:cn-north-1:123456789012:alias/state",
      },
      /expected a KMS key in the bucket's region, cn-north-1 \(an ARN starting arn:aws-cn:kms:cn-north-1:\)/,
    ],
  ])("refuses %s, naming the setting", (_case, backend, message) => {
    expect(() => withBackend(backend)).toThrow(message);
  });

  it("accepts local states outside cdktf.out, and git ignores every one inside the project", () => {
    const root = resolve(__dirname, "../..");
    for (const path of [
      "../../../terraform.dev.tfstate",
      "../../../state/dev.tfstate",
      "../../../../elsewhere/dev.tfstate",
    ]) {
      expect(withBackend({ path }).backend).toEqual({ type: "local", path });
      const file = localStateFile(path);
      if (file.startsWith("../")) continue;
      // The state, Terraform's backup beside it and its lock file: none can be committed.
      for (const written of [file, `${file}.backup`, file.replace(/[^/]*$/, (name) => `.${name}.lock.info`)]) {
        const ignored = spawnSync("git", ["check-ignore", "--no-index", "-q", written], { cwd: root });
        expect({ written, ignored: ignored.status }).toEqual({ written, ignored: 0 });
      }
    }
  });
});
