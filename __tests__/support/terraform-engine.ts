/**
 * Runs a real Terraform-compatible engine (built by scripts/ci/install-tools.sh) on
 * provider-free configurations in temporary directories. The AWS provider cannot be
 * downloaded here, so these configurations hold only what Terraform evaluates by itself:
 * variables and their validation, locals, outputs and the built-in terraform_data resource.
 */
import { execFile } from "child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { delimiter, join } from "path";
import { describeWithTools } from "./required-tools";

export interface EngineResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Path of the engine: $TERRAFORM_BINARY_NAME, else `terraform` on PATH; undefined when there is none. */
export function findEngine(): string | undefined {
  const named = process.env.TERRAFORM_BINARY_NAME;
  if (named && existsSync(named)) return named;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "terraform");
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** `describe` with the engine's path, under the policy of describeWithTools for a missing engine. */
export function describeWithEngine(
  name: string,
  body: (engine: string) => void,
  otherMissingTools: string[] = [],
): void {
  const engine = findEngine();
  const missing = engine ? otherMissingTools : ["a Terraform engine ($TERRAFORM_BINARY_NAME)", ...otherMissingTools];
  describeWithTools(name, missing, () => body(engine ?? "terraform"));
}

/** A temporary directory holding one Terraform JSON configuration. */
export class EngineWorkspace {
  public readonly dir = mkdtempSync(join(tmpdir(), "crm-engine-"));

  constructor(
    private readonly engine: string,
    configuration: object,
  ) {
    this.writeConfiguration(configuration);
    // An empty CLI configuration of our own: the machine's (or a missing one) must not leak into results.
    writeFileSync(join(this.dir, "cli.tfrc"), "");
  }

  /** Replaces the configuration (the state stays): the next release of a stack, say. */
  public writeConfiguration(configuration: object): void {
    writeFileSync(join(this.dir, "main.tf.json"), JSON.stringify(configuration, null, 2));
  }

  /**
   * Runs the engine with arguments and extra environment; never throws on a non-zero exit.
   * `bytes` are environment values given as raw bytes (such as invalid UTF-8, which Node.js
   * cannot put in an environment): bash decodes them from `\xHH` escapes just before the engine starts.
   * `timeoutMs`: the engine is killed (SIGTERM, as Ctrl-C) after that long, and the result's code is 1.
   */
  public run(
    args: string[],
    env: Record<string, string> = {},
    bytes: Record<string, Buffer> = {},
    timeoutMs = 0,
  ): Promise<EngineResult> {
    const escaped = Object.fromEntries(
      Object.entries(bytes).map(([name, value]) => [
        `RAW_BYTES_${name}`,
        [...value].map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join(""),
      ]),
    );
    const [file, fileArgs] =
      Object.keys(bytes).length === 0
        ? [this.engine, args]
        : [
            "bash",
            [
              "-c",
              'for n in "${!RAW_BYTES_@}"; do v=$(printf "%b." "${!n}"); export "${n#RAW_BYTES_}=${v%.}"; unset "$n"; done; exec "$@"',
              "bash",
              this.engine,
              ...args,
            ],
          ];
    return new Promise((resolve) => {
      execFile(
        file,
        fileArgs,
        {
          cwd: this.dir,
          env: {
            ...process.env,
            CHECKPOINT_DISABLE: "1",
            TF_IN_AUTOMATION: "1",
            TF_INPUT: "0",
            TF_CLI_CONFIG_FILE: join(this.dir, "cli.tfrc"),
            ...env,
            ...escaped,
          },
          maxBuffer: 16 * 1024 * 1024,
          timeout: timeoutMs,
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** `init` without a backend or providers to download; throws when it fails. */
  public async init(): Promise<void> {
    const result = await this.run(["init", "-input=false", "-no-color"]);
    if (result.code !== 0) throw new Error(`terraform init failed:\n${result.stdout}\n${result.stderr}`);
  }

  /** `plan` with the given variables passed as TF_VAR_ environment variables (as users' CI does). */
  public plan(variables: Record<string, string | string[]>, bytes: Record<string, Buffer> = {}): Promise<EngineResult> {
    const rawVariables = Object.fromEntries(Object.entries(bytes).map(([name, value]) => [`TF_VAR_${name}`, value]));
    return this.run(["plan", "-input=false", "-no-color", "-lock=false"], tfVars(variables), rawVariables);
  }

  public remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Terraform variables as TF_VAR_ environment entries; lists and maps are written as HCL/JSON. */
export function tfVars(variables: Record<string, string | string[]>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [
      `TF_VAR_${name}`,
      typeof value === "string" ? value : JSON.stringify(value),
    ]),
  );
}

/** Terraform's error text with its box-drawing frame and line wrapping removed, for matching messages. */
export function flatten(text: string): string {
  return text.replace(/[│╷╵]/g, " ").replace(/\s+/g, " ");
}
