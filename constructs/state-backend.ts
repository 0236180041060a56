import { LocalBackend, S3Backend, TerraformBackend, TerraformStack } from "cdktf";
import { Construct } from "constructs";

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

/** Props of {@link StateBackend}. */
export interface StateBackendProps {
  /** The backend and its options, from the stack's settings. */
  readonly settings: BackendSettings;
  /** Region used when the S3 settings name none (the stack's region). */
  readonly defaultRegion: string;
}

/**
 * The stack's Terraform backend. S3 state is always encrypted and locked with S3's own lock file
 * (`use_lockfile`): no DynamoDB table. cdktf 0.21's S3Backend has no `useLockfile` field, so that
 * one attribute is added as an override of the backend block, which Terraform reads as written.
 */
export class StateBackend extends Construct {
  /** The cdktf backend element (one per stack). */
  public readonly backend: TerraformBackend;

  constructor(scope: Construct, id: string, props: StateBackendProps) {
    super(scope, id);
    const stackName = TerraformStack.of(this).node.id;
    const settings = props.settings;
    if (settings.type === "local") {
      this.backend = new LocalBackend(this, { path: settings.path ?? defaultLocalStatePath(stackName) });
      return;
    }
    const backend = new S3Backend(this, {
      bucket: settings.bucket,
      key: settings.key ?? defaultStateKey(stackName),
      region: settings.region ?? props.defaultRegion,
      encrypt: true,
      kmsKeyId: settings.kmsKeyId,
      workspaceKeyPrefix: settings.workspaceKeyPrefix,
    });
    backend.addOverride("use_lockfile", true);
    this.backend = backend;
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
