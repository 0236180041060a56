/**
 * The `backend` setting: where Terraform keeps the stack's state (the StateBackend construct,
 * constructs/state-backend.ts, takes the BackendSettings defined here).
 * One object for both kinds, so that a misplaced option is named: `bucket` on a local backend,
 * or `path` on S3, is refused with the setting's name.
 */
import { posix } from "path";
import { z } from "zod";
import { isInside } from "./host-layout";
import { awsRegion, isKmsKeyInRegion, kmsArnStart, matching, settingRules } from "./rules";

/** Where Terraform keeps the state of a stack: a local file (the default) or an S3 bucket. */
export type BackendSettings = LocalBackendSettings | S3BackendSettings;

/** State in a file on the machine that runs Terraform: for one person trying the stack. */
export interface LocalBackendSettings {
  readonly type: "local";
  /**
   * State file, relative to the stack's directory (`cdktf.out/stacks/<stack>`, where Terraform
   * runs). Relative so that the synthesized JSON holds no path of the machine that synthesized it.
   * @default "../../../terraform.<stack>.tfstate": the project directory, where cdktf keeps it by
   * default, outside `cdktf.out` (which cdktf cleans)
   */
  readonly path?: string;
}

/** State in an S3 bucket, encrypted, locked by S3 itself (`use_lockfile`, Terraform >= 1.10): for teams and CI. */
export interface S3BackendSettings {
  readonly type: "s3";
  /** The bucket (created beforehand: versioned, private; docs/github-actions.md). */
  readonly bucket: string;
  /** Object key of the state. @default "<stack>/terraform.tfstate" (one key per stack, hence per environment) */
  readonly key?: string;
  /** Region of the bucket. @default the stack's region */
  readonly region?: string;
  /** ARN of a KMS key that encrypts the state (SSE-KMS). @default none: S3-managed keys (SSE-S3, AES256) */
  readonly kmsKeyId?: string;
  /** Key prefix of the states of non-default Terraform workspaces. @default Terraform's, "env:" */
  readonly workspaceKeyPrefix?: string;
}

/** cdktf's synthesis output (cdktf.json's default `output`): it deletes the stack folders there that a synthesis did not produce. */
export const SYNTH_OUTPUT = "cdktf.out";

// An S3 key segment: S3's "safe characters" (letters, digits, ! - _ . * ' ( )).
const KEY_SEGMENT = "[A-Za-z0-9!_.*'()-]+";

const S3_ONLY = ["bucket", "key", "region", "kmsKeyId", "workspaceKeyPrefix"] as const;

const backendType = z.enum(["local", "s3"], { error: '"local" or "s3"' }).meta({
  description:
    "`local`: a state file on the machine that runs Terraform (one person trying the stack); `s3`: an S3 bucket, encrypted, with S3-native locking (teams and CI).",
});
settingRules.add(backendType, { expected: '"local" or "s3"' });

/** The `backend` object of a settings file. */
export const backendSettingsSchema = z
  .strictObject({
    type: backendType.default("local"),
    path: matching(
      "Local backend: the state file, relative to the stack's directory `cdktf.out/stacks/<stackName>` (default: `../../../terraform.<stackName>.tfstate`, the project directory, outside `cdktf.out`, which cdktf cleans).",
      /^(?!\/)(?!.*\/\/)[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\.tfstate$/,
      "a relative path ending in .tfstate (letters, digits, / . _ - only), such as ../../../terraform.dev.tfstate",
    ).optional(),
    bucket: matching(
      "S3 backend: the bucket of the state (created beforehand: versioned, private; see docs/github-actions.md). Required for `s3`.",
      /^(?!.*\.\.)(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      "an S3 bucket name of 3 to 63 lowercase letters, digits, . or -, starting and ending with a letter or digit",
    ).optional(),
    key: matching(
      "S3 backend: the object key of the state (default: `<stackName>/terraform.tfstate`, one key per stack).",
      new RegExp(`^(?=.{1,1024}$)${KEY_SEGMENT}(/${KEY_SEGMENT})*$`),
      "an S3 object key such as crm/prod/terraform.tfstate (letters, digits, ! - _ . * ' ( ) and /, not starting or ending with /)",
    ).optional(),
    region: awsRegion("S3 backend: the bucket's region (default: the stack's `region`).").optional(),
    kmsKeyId: matching(
      "S3 backend: ARN of the KMS key that encrypts the state (default: none, S3-managed keys).",
      /^arn:aws[a-z-]*:kms:[a-z]{2}(-[a-z]+)+-[0-9]:[0-9]{12}:(key\/[A-Za-z0-9-]{1,64}|alias\/[A-Za-z0-9/_-]{1,250})$/,
      "the ARN of a KMS key or alias, such as arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    ).optional(),
    workspaceKeyPrefix: matching(
      "S3 backend: key prefix of the states of non-default Terraform workspaces (default: Terraform's, `env:`).",
      new RegExp(`^${KEY_SEGMENT}(/${KEY_SEGMENT})*$`),
      "a key prefix of letters, digits, ! - _ . * ' ( ) and /, not starting or ending with /",
    ).optional(),
  })
  .check((ctx) => {
    const value = ctx.value;
    if (value.type === "s3") {
      if (value.path !== undefined) {
        ctx.issues.push({
          code: "custom",
          path: ["path"],
          input: value.path,
          message: "no path with an s3 backend (path is for the local backend)",
        });
      }
      if (value.bucket === undefined) {
        ctx.issues.push({
          code: "custom",
          path: ["bucket"],
          input: undefined,
          message: "the bucket of the state (required with an s3 backend)",
        });
      }
      return;
    }
    for (const key of S3_ONLY) {
      if (value[key] !== undefined) {
        ctx.issues.push({
          code: "custom",
          path: [key],
          input: value[key],
          message: `no ${key} with a local backend (set "type": "s3" to keep the state in S3)`,
        });
      }
    }
    const file = value.path === undefined ? undefined : localStateFile(value.path);
    if (file !== undefined && (file === SYNTH_OUTPUT || isInside(file, SYNTH_OUTPUT))) {
      ctx.issues.push({
        code: "custom",
        path: ["path"],
        input: value.path,
        message:
          `a state file outside ${SYNTH_OUTPUT}, which cdktf cleans (the path is relative to ${SYNTH_OUTPUT}/stacks/<stackName>: ` +
          "start it with ../../../, such as ../../../terraform.dev.tfstate)",
      });
    }
  })
  .meta({ description: "Where Terraform keeps the stack's state (default: local)." });

/** The parsed `backend` object as the StateBackend construct takes it. */
export function backendSettings(value: z.output<typeof backendSettingsSchema> | undefined): BackendSettings {
  if (value === undefined || value.type === "local") return { type: "local", path: value?.path };
  return {
    type: "s3",
    bucket: value.bucket!,
    key: value.key,
    region: value.region,
    kmsKeyId: value.kmsKeyId,
    workspaceKeyPrefix: value.workspaceKeyPrefix,
  };
}

/** Where a local state `path` (relative to the stack's folder, `cdktf.out/stacks/<stackName>`) lands, relative to the project. */
export function localStateFile(path: string): string {
  return posix.normalize(posix.join(SYNTH_OUTPUT, "stacks", "stack", path));
}

/**
 * Refuses an S3 state whose KMS key is not in the bucket's region (S3 encrypts only with a key of its
 * own region and partition): the key's ARN names its region, the bucket's is `backend.region` or the stack's.
 */
export function stateKeyInBucketRegion(
  settings: { region: string; backend?: z.output<typeof backendSettingsSchema> },
  ctx: z.core.ParsePayload<unknown>,
): void {
  const backend = settings.backend;
  if (backend?.type !== "s3" || backend.kmsKeyId === undefined) return;
  const region = backend.region ?? settings.region;
  if (!isKmsKeyInRegion(backend.kmsKeyId, region)) {
    ctx.issues.push({
      code: "custom",
      path: ["backend", "kmsKeyId"],
      input: backend.kmsKeyId,
      message: `a KMS key in the bucket's region, ${region} (an ARN starting ${kmsArnStart(region)}): S3 encrypts only with a key of its own region`,
    });
  }
}

/** The default local state file of a stack, relative to `cdktf.out/stacks/<stack>`. */
export function defaultLocalStatePath(stackName: string): string {
  return `../../../terraform.${stackName}.tfstate`;
}

/** The default S3 key of a stack's state. */
export function defaultStateKey(stackName: string): string {
  return `${stackName}/terraform.tfstate`;
}
