import { LocalBackend, S3Backend, TerraformBackend, TerraformStack } from "cdktf";
import { Construct } from "constructs";
import { BackendSettings, defaultLocalStatePath, defaultStateKey } from "../settings/backend-settings";

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
