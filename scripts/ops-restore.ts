/**
 * The real restore of a single host's database from a snapshot (docs/operations.md, "Restoring the database
 * from a snapshot"): one list of Terraform steps, which `npm run ops -- <stack> restore` prints as a guide and,
 * confirmed, runs (scripts/ops.ts, guidedRestore); and the checks of every input of those steps, made before
 * the first one changes the state: `terraform state rm` takes the data volume out of the state, so a step after
 * it that fails on an input would leave a state whose next deploy plans a new, empty volume.
 */
import { spawnSync } from "child_process";
import { accessSync, constants, existsSync, statSync } from "fs";
import { Snapshot } from "@aws-sdk/client-ec2";
import { SINGLE_HOST_ADDRESSES, SINGLE_HOST_RESOURCES } from "../constructs/addresses";
import { StackSettings } from "../settings/stack-settings";
import { shellQuote } from "../userdata/script";
import { UserError } from "./cli-options";
import { OPS_TIMEOUTS } from "./ops-timeouts";
import { terraformReason } from "./terraform-reason";

/** `word` as one word of a shell command line: as it is when the shell reads it so, else quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./=:@%+,-]+$/.test(word) ? word : shellQuote(word);
}

/** The Terraform commands of the restore, in order, as arguments of `terraform` in the stack's directory. */
export function restoreSteps(snapshotId: string, varFile: string): string[][] {
  return [
    ["state", "rm", SINGLE_HOST_ADDRESSES.dataVolume],
    [
      "apply",
      `-var=data_volume_snapshot_id=${snapshotId}`,
      `-replace=${SINGLE_HOST_ADDRESSES.host}`,
      `-var-file=${varFile}`,
    ],
  ];
}

/**
 * The real restore, guided: restoreSteps with the stack's names, the snapshot and the tfvars filled in, each
 * a shell command to run in the project directory. `varFile` is absolute (the guide changes directory).
 */
export function restoreGuide(settings: StackSettings, snapshot: Snapshot, varFile: string): string[] {
  const stack = settings.stackName;
  return [
    `The real restore: a new host whose data volume is made from ${snapshot.SnapshotId} (${snapshot.StartTime?.toISOString()}).`,
    "The current data volume leaves Terraform's care but stays in AWS, detached, as a fallback; the Elastic IP stays.",
    "Run, in the project directory, with the state's credentials:",
    "",
    "export CHECKPOINT_DISABLE=1",
    `npx cdktf synth && cd ${shellWord(`cdktf.out/stacks/${stack}`)} && terraform init`,
    ...restoreSteps(snapshot.SnapshotId ?? "", varFile).map((args) => ["terraform", ...args].map(shellWord).join(" ")),
    "",
    "Then keep data_volume_snapshot_id set (changing it would replace the volume), check the app (npm run ops -- " +
      `${stack} status), and delete the old volume (aws ec2 delete-volume). From GitHub Actions: docs/operations.md.`,
  ];
}

/**
 * Checks every input of restoreSteps before the first runs, each refusal one line: the tfvars is a readable
 * file, Terraform runs, the stack's directory is synthesized and initialised, and its state holds the data
 * volume and the host (`terraform state list`). The snapshot was found completed in the stack's Region
 * (chooseSnapshot) before. Returns the data volume's id in the state (`terraform state pull`), if it reads.
 */
export function checkRestoreInputs(
  stackDirectory: string,
  varFile: string,
  terraform: string,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (!existsSync(varFile) || !statSync(varFile).isFile()) {
    throw new UserError(
      `--var-file ${varFile} is not a file: expected your stack's tfvars (a copy of examples/terraform.tfvars.example); nothing changed`,
      2,
    );
  }
  try {
    accessSync(varFile, constants.R_OK);
  } catch {
    throw new UserError(`--var-file ${varFile} cannot be read (permissions); nothing changed`, 2);
  }
  if (!existsSync(stackDirectory))
    throw new UserError(
      `there is no ${stackDirectory}: run npx cdktf synth and terraform init there first; nothing changed`,
    );
  const listed = spawnSync(terraform, ["state", "list", "-no-color"], {
    cwd: stackDirectory,
    encoding: "utf8",
    timeout: OPS_TIMEOUTS.terraformSeconds * 1000,
    env,
  });
  if ((listed.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    throw new UserError(
      `Terraform (${terraform}) is not installed: install Terraform 1.10 or later (npm run doctor checks every prerequisite); nothing changed`,
    );
  }
  if (listed.error || listed.status !== 0) {
    const why = listed.error?.message ?? terraformReason(listed.stderr ?? "") ?? `exit ${listed.status}`;
    throw new UserError(
      `terraform state list failed in ${stackDirectory} (${why.trim()}): run terraform init there (with the state's credentials); nothing changed`,
    );
  }
  const addresses = listed.stdout.split("\n").map((line) => line.trim());
  const missing = Object.values(SINGLE_HOST_ADDRESSES).filter((address) => !addresses.includes(address));
  if (missing.length > 0) {
    throw new UserError(
      `the state in ${stackDirectory} holds no ${missing.join(" or ")}: is the stack deployed, and this its directory? nothing changed`,
    );
  }
  return stateVolumeId(stackDirectory, terraform, env);
}

/** The data volume's id as the state records it (the raw state: no provider needed), or undefined. */
function stateVolumeId(stackDirectory: string, terraform: string, env: NodeJS.ProcessEnv): string | undefined {
  const pulled = spawnSync(terraform, ["state", "pull"], {
    cwd: stackDirectory,
    encoding: "utf8",
    timeout: OPS_TIMEOUTS.terraformSeconds * 1000,
    env,
  });
  const { type, name } = SINGLE_HOST_RESOURCES.dataVolume;
  try {
    const state = JSON.parse(pulled.stdout) as {
      resources?: {
        mode: string;
        module?: string;
        type: string;
        name: string;
        instances?: { attributes?: { id?: unknown } }[];
      }[];
    };
    const id = state.resources?.find((r) => r.mode === "managed" && !r.module && r.type === type && r.name === name)
      ?.instances?.[0]?.attributes?.id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What to do when a step after `state rm` failed: the volume is out of the state but still in AWS, and
 * `terraform import` puts it back (the previous good state), or the restore runs again.
 */
export function restoreRecovery(stackDirectory: string, varFile: string, volumeId: string | undefined): string {
  const volume = volumeId ?? "<the data volume's id: aws ec2 describe-volumes>";
  return (
    `the state no longer holds ${SINGLE_HOST_ADDRESSES.dataVolume} (${volume}, still in AWS): put it back with ` +
    `\`cd ${shellWord(stackDirectory)} && terraform import ${shellWord(`-var-file=${varFile}`)} ${SINGLE_HOST_ADDRESSES.dataVolume} ${shellWord(volume)}\`` +
    ", or run the restore again once the cause is fixed"
  );
}
