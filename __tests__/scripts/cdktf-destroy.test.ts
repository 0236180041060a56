/**
 * `npm run destroy` (scripts/cdktf.sh destroy) after cdktf has spoken, with the real cdktf and Terraform, no AWS: a
 * scratch cdktf project whose stack is Terraform's built-in `terraform_data` (no provider), one resource with
 * `lifecycle.prevent_destroy` as the data volume has it, one without. Its package.json's `check:settings` is `true`:
 * the stack has no settings file to check. Without a terminal, as a script or CI runs it.
 *
 * - Refused by prevent_destroy: cdktf's output as it was (Terraform's error, which names only disabling the setting
 *   or -target), then our one line: the `state rm` that keeps the volume, or the setting that deletes it.
 * - After `state rm` and a destroy that succeeds: the saved plan (which holds the secrets in a real stack) is gone,
 *   and the state backups left are named, with how to wipe them.
 */
import { spawn } from "child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { dirname, join, resolve } from "path";
import { stripVTControlCharacters } from "util";
import { describeWithEngine } from "../support/terraform-engine";

const ROOT = resolve(__dirname, "../..");
const STACK = "KeepStack";
const STEP_MS = 120_000;

jest.setTimeout(8 * 60_000);

const APP = `const { App, TerraformStack, TerraformResource } = require("cdktf");
const app = new App();
const stack = new TerraformStack(app, "${STACK}");
new TerraformResource(stack, "kept", { terraformResourceType: "terraform_data", lifecycle: { preventDestroy: true } });
new TerraformResource(stack, "other", { terraformResourceType: "terraform_data" });
app.synth();
`;

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describeWithEngine(
  "npm run destroy: after a refusal by prevent_destroy, our way out; after a destroy, the files left",
  (engine) => {
    let project: string;
    let env: NodeJS.ProcessEnv;

    /** `bash <args>` in the scratch project, standard input /dev/null (no terminal); bounded. */
    function bash(args: string[]): Promise<Ran> {
      return new Promise((done) => {
        const child = spawn("bash", args, { cwd: project, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), STEP_MS);
        child.on("close", (code) => {
          clearTimeout(timer);
          done({ code: code ?? 137, stdout, stderr });
        });
      });
    }
    const npmRun = (command: string, ...args: string[]) => bash([join(ROOT, "scripts/cdktf.sh"), command, ...args]);
    const plain = (text: string) => stripVTControlCharacters(text);

    beforeAll(async () => {
      project = mkdtempSync(join(tmpdir(), "crm-destroy-"));
      writeFileSync(join(project, "app.js"), APP);
      writeFileSync(
        join(project, "cdktf.json"),
        JSON.stringify({ language: "typescript", app: "node app.js", terraformProviders: [], terraformModules: [] }),
      );
      writeFileSync(
        join(project, "package.json"),
        JSON.stringify({ name: "scratch", private: true, scripts: { "check:settings": "true" } }),
      );
      symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"));
      env = {
        ...process.env,
        CI: undefined,
        CHECKPOINT_DISABLE: "1",
        TERRAFORM_BINARY_NAME: engine,
        PATH: `${join(ROOT, "node_modules/.bin")}:${dirname(engine)}:${process.env.PATH}`,
      };
      for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
      const deploy = await npmRun("deploy", "--auto-approve");
      if (deploy.code !== 0) throw new Error(`deploy: exit ${deploy.code}\n${deploy.stdout}\n${deploy.stderr}`);
      const diff = await npmRun("diff");
      if (diff.code !== 0) throw new Error(`diff: exit ${diff.code}\n${diff.stdout}\n${diff.stderr}`);
    });

    afterAll(() => {
      if (project) rmSync(project, { recursive: true, force: true });
    });

    it("refused by prevent_destroy: Terraform's error as cdktf shows it, then one line naming the state rm and the setting", async () => {
      const refused = await npmRun("destroy", "--auto-approve");
      expect(refused.code).toBe(1);
      expect(plain(refused.stdout)).toMatch(/Error: Instance cannot be destroyed/);
      expect(refused.stderr.trimEnd().split("\n").pop()).toBe(
        "npm run destroy: the data volume is kept (prevent_destroy): to destroy the rest " +
          `and keep it, terraform -chdir=cdktf.out/stacks/${STACK} state rm aws_ebs_volume.crm_data, then npm run destroy again; to delete it ` +
          'too (after a final snapshot), "deleteDataVolumeOnDestroy": true in the settings file (docs/operations.md#destroying-and-the-data-volume)',
      );
      // Nothing was destroyed: the saved plan stays.
      expect(existsSync(join(project, "cdktf.out/stacks", STACK, "plan"))).toBe(true);
    });

    it("state rm, then a destroy: the saved plan is removed, the state backups left are named with how to wipe them", async () => {
      const rm = await bash([
        "-c",
        `"$TERRAFORM_BINARY_NAME" -chdir=cdktf.out/stacks/${STACK} state rm terraform_data.kept`,
      ]);
      expect(rm.code).toBe(0);
      const destroyed = await npmRun("destroy", "--auto-approve");
      expect(destroyed.code).toBe(0);
      expect(existsSync(join(project, "cdktf.out/stacks", STACK, "plan"))).toBe(false);
      const stateRmBackup = readdirSync(join(project, "cdktf.out/stacks", STACK)).filter((name) =>
        /^terraform\.tfstate\.\d+\.backup$/.test(name),
      );
      expect(stateRmBackup).toHaveLength(1);
      const backups = [`terraform.${STACK}.tfstate.backup`, `cdktf.out/stacks/${STACK}/${stateRmBackup[0]}`];
      for (const backup of backups) expect(existsSync(join(project, backup))).toBe(true);
      const said = destroyed.stdout.trimEnd().split("\n").slice(-2);
      expect(said).toEqual([
        `npm run destroy: removed the saved plan, which held the secrets: cdktf.out/stacks/${STACK}/plan`,
        `npm run destroy: the state backups left hold the secrets: ${backups.join(" ")}; once you no longer need them ` +
          `(the way back from a state rm), wipe them: shred -u ${backups.join(" ")} (or rm)`,
      ]);
    });
  },
);
