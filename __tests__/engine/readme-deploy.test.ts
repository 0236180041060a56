/**
 * README.md's Deploy section and its day-2 rows, run as written: the commands are read from the README
 * (its Deploy code block, the rows "change a setting or a variable" and "destroy all but the database"),
 * not retyped, and run by bash in a fresh copy of the project (as a clone holds it), without a terminal
 * (standard input is /dev/null), through the real AWS provider (the project's Terraform CLI configuration:
 * this machine's filesystem mirror) against moto. What the test adds is what a user adds: their values for
 * the README's `…` (the three secrets), dev.tfvars filled in (a subnet of moto's default VPC, a fresh key),
 * the settings file edited, `--auto-approve` where the README says a script adds it, `<stack>` named, and
 * the AWS provider version `npm run doctor` names for this machine's mirror (CRM_AWS_PROVIDER_VERSION).
 *
 * Steps: doctor; diff; deploy without --auto-approve (one line, exit 2, before cdktf); deploy; npm run output (each
 * value on one line, the provisioning log's ssh command whole, as a user copies it);
 * a setting changed (tags) and deploy again, which must complete; the secret scan; the keep-the-data
 * destroy (`terraform -chdir=… state rm aws_ebs_volume.crm_data`, then `npm run destroy`); the scan again.
 * The scan greps every file left under the copy and its TMPDIR for the secrets (raw, base64, and inside
 * zip files such as the saved plan) and checks those that hold them: 0600, in 0700 directories (the
 * project folder itself excepted: it is the user's, and holds the local state file, 0600).
 *
 * moto's gaps, and what the test does about each (nothing else is changed):
 * - Data Lifecycle Manager (aws_dlm_lifecycle_policy; moto has no dlm backend, __tests__/engine/moto-gaps.json):
 *   a stand-in on loopback (__tests__/support/dlm-stand-in.ts) through the provider's per-service endpoint
 *   variable, AWS_ENDPOINT_URL_DLM; the stack is deployed unchanged, policy included.
 * - The drift moto-gaps.json lists for aws_instance (disable_api_termination, the groups of an instance
 *   launched with a network interface): the second deploy updates them again, through APIs moto has.
 *   (maintenance_options was the third: the product no longer states EC2's default, see crm-instance.ts.)
 */
import { execFileSync, spawn } from "child_process";
import { randomBytes } from "crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { stripVTControlCharacters } from "util";
import { gunzipSync } from "zlib";
import { dirname, join, relative, resolve } from "path";
import { DlmStandIn } from "../support/dlm-stand-in";
import { freshCopy } from "../support/fresh-copy";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { awsJson, findProviderSetup, isolatedMotoEnvironment } from "../support/real-provider";
import { newKey } from "../support/ssh-keys";
import { describeWithEngine } from "../support/terraform-engine";
import { TEARDOWN_MS } from "../support/teardown";

const ROOT = resolve(__dirname, "../..");
const REGION = "us-east-1";
const STACK = "CrmHostStack";
/** Each command's bound; the whole test's: jest's timeout below. */
const STEP_MS = 8 * 60_000;
const moto = findMotoServer();
const setup = findProviderSetup();

jest.setTimeout(40 * 60_000);

interface Ran {
  readonly code: number;
  /** Standard output and error, interleaved. */
  readonly output: string;
  readonly stderr: string;
  readonly seconds: number;
}

/** The README's commands a user types, from the README itself. */
export function readmeCommands(readme: string): {
  setup: string[];
  diff: string;
  deploy: string;
  output: string;
  change: string;
  keepData: string;
  destroy: string;
} {
  const section = readme.slice(readme.indexOf("\n## Deploy\n"));
  const block = /```sh\n([\s\S]*?)```/
    .exec(section)![1]
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
  const line = (start: string) => block.find((l) => l.startsWith(start))!;
  const row = (task: string) =>
    [
      ...readme
        .split("\n")
        .find((l) => l.startsWith(`| ${task} |`))!
        .split("|")[2]
        .matchAll(/`([^`]+)`/g),
    ].map((m) => m[1]);
  const [keepData, destroy] = row("destroy all but the database");
  return {
    setup: block.filter((l) => !/^(npm|npx) /.test(l)),
    diff: line("npm run diff"),
    deploy: line("npm run deploy"),
    output: line("npm run output"),
    change: row("change a setting or a variable").find((c) => c.startsWith("npm run deploy"))!,
    keepData,
    destroy,
  };
}

/** Every file under `dir` (symbolic links, such as node_modules, not followed). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

describeWithEngine(
  "README.md's Deploy section and day-2 rows, run as written against moto",
  (engine) => {
    const secrets = {
      TF_VAR_db_root_password: `Root-${randomBytes(6).toString("hex")}`,
      TF_VAR_app_db_password: `App-${randomBytes(6).toString("hex")}`,
      TF_VAR_source_host_token: `Token-${randomBytes(6).toString("hex")}`,
    };
    const commands = readmeCommands(readFileSync(join(ROOT, "README.md"), "utf8"));
    const figures: string[] = [];
    let server: MotoServer;
    let dlm: DlmStandIn;
    let project: string;
    let temp: string;
    let env: NodeJS.ProcessEnv;

    /** The README's setup lines (umask, exports with the user's values for `…`), then `command`, by bash in the copy, no terminal; bounded. */
    function sh(step: string, command: string): Promise<Ran> {
      const lines = commands.setup.map((line) =>
        line.replace(/(TF_VAR_\w+)=…/g, (_, name: keyof typeof secrets) => `${name}=${secrets[name]}`),
      );
      const started = Date.now();
      return new Promise((done) => {
        const child = spawn("bash", ["-euo", "pipefail", "-c", [...lines, command].join("\n")], {
          cwd: project,
          env,
          stdio: ["ignore", "pipe", "pipe"],
          detached: true,
        });
        let output = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (output += chunk));
        child.stderr.on("data", (chunk) => {
          output += chunk;
          stderr += chunk;
        });
        const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), STEP_MS);
        child.on("close", (code) => {
          clearTimeout(timer);
          const seconds = Math.round((Date.now() - started) / 1000);
          figures.push(`${step}: ${seconds} s, exit ${code}`);
          done({ code: code ?? 137, output, stderr, seconds });
        });
      });
    }

    const expectSuccess = (ran: Ran) => {
      if (ran.code !== 0) throw new Error(`exit ${ran.code}:\n${ran.output.slice(-6000)}`);
    };

    /**
     * The files of the copy and its TMPDIR that hold a secret: raw, base64, inside a zip file (the saved plan), or
     * inside base64 gzip (the user data in the state and the plan), each with its mode and its directories'.
     */
    function secretHolders(): { file: string; mode: string; dirModes: string[] }[] {
      const needles = Object.values(secrets).flatMap((value) => [
        value,
        Buffer.from(value).toString("base64").slice(0, 12),
      ]);
      return [...filesUnder(project), ...filesUnder(temp)].flatMap((file) => {
        let bytes = readFileSync(file);
        if (bytes.subarray(0, 4).equals(Buffer.from("PK\x03\x04", "latin1"))) {
          bytes = Buffer.concat([bytes, execFileSync("unzip", ["-p", file], { maxBuffer: 256 << 20 })]);
        }
        const gzipped = [...bytes.toString("latin1").matchAll(/H4sI[A-Za-z0-9+/=]+/g)].flatMap(([blob]) => {
          try {
            return [gunzipSync(Buffer.from(blob, "base64"))];
          } catch {
            return [];
          }
        });
        const text = Buffer.concat([bytes, ...gzipped]).toString("latin1");
        if (!needles.some((needle) => text.includes(needle))) return [];
        const dirs: string[] = [];
        const top = file.startsWith(temp) ? temp : project;
        for (let dir = dirname(file); dir.length > top.length; dir = dirname(dir)) dirs.push(dir);
        const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
        return [
          { file: relative(file.startsWith(temp) ? temp : project, file), mode: mode(file), dirModes: dirs.map(mode) },
        ];
      });
    }

    beforeAll(async () => {
      server = await MotoServer.start(moto!, 30_000, { MOTO_IAM_LOAD_MANAGED_POLICIES: "true" });
      dlm = await DlmStandIn.start(REGION);
      project = freshCopy("crm-readme-");
      temp = mkdtempSync(join(tmpdir(), "crm-readme-tmp-"));
      const base = isolatedMotoEnvironment(server.endpoint, REGION);
      env = {
        ...process.env,
        ...base,
        AWS_ENDPOINT_URL_DLM: dlm.endpoint,
        TMPDIR: temp,
        CI: undefined,
        CRM_SETTINGS: undefined,
        TF_CLI_CONFIG_FILE: setup!.cliConfig,
        TERRAFORM_BINARY_NAME: engine,
        PATH: `${dirname(engine)}:${process.env.PATH}`,
      };
      for (const name of Object.keys(env)) if (name.startsWith("TF_VAR_") || env[name] === undefined) delete env[name];
      // An account as the README asks for: a public subnet in a VPC with DNS hostnames on.
      const awsEnv = base as Record<string, string>;
      const vpc = (await awsJson(["ec2", "describe-vpcs", "--filters", "Name=is-default,Values=true"], awsEnv)).Vpcs[0]
        .VpcId as string;
      await awsJson(
        ["ec2", "modify-vpc-attribute", "--vpc-id", vpc, "--enable-dns-hostnames", '{"Value":true}'],
        awsEnv,
      );
      const subnet = (await awsJson(["ec2", "describe-subnets", "--filters", `Name=vpc-id,Values=${vpc}`], awsEnv))
        .Subnets[0].SubnetId as string;
      // Steps 1 and 2: the example settings kept; dev.tfvars copied from the example and filled in.
      const tfvars = readFileSync(join(project, "examples/terraform.tfvars.example"), "utf8")
        .replace(/^subnet_id\s*=\s*"[^"]*"/m, `subnet_id = "${subnet}"`)
        .replace(/^ssh_public_key\s*=\s*"[^"]*"/m, `ssh_public_key = "${newKey("ed25519", 0, "crm-admin").line}"`);
      writeFileSync(join(project, "dev.tfvars"), tfvars);
    });

    afterAll(async () => {
      console.log(
        `readme-deploy: hashicorp/aws ${env?.CRM_AWS_PROVIDER_VERSION ?? "(pinned)"} against moto\n${figures.join("\n")}`,
      );
      await server?.stop();
      await dlm?.stop();
      if (project) rmSync(project, { recursive: true, force: true });
      if (temp) rmSync(temp, { recursive: true, force: true });
    }, TEARDOWN_MS);

    it("npm run doctor names the provider version for this machine's mirror, which the user exports", async () => {
      const doctor = await sh("doctor", "npm run -s doctor");
      const fix = /^MISSING AWS provider: .*: export CRM_AWS_PROVIDER_VERSION=(\d+\.\d+\.\d+)$/m.exec(
        doctor.output,
      )?.[1];
      if (setup!.version && !doctor.output.includes(`ok      AWS provider: hashicorp/aws ${setup!.version}`)) {
        expect(fix).toBe(setup!.version);
        env.CRM_AWS_PROVIDER_VERSION = fix;
      }
    });

    it("npm run diff plans the stack; its plan is the user's alone", async () => {
      const diff = await sh("diff", commands.diff);
      expectSuccess(diff);
      expect(stripVTControlCharacters(diff.output)).toMatch(/Plan: \d+ to add, 0 to change, 0 to destroy/);
      const plan = join(project, "cdktf.out", "stacks", STACK, "plan");
      expect((statSync(plan).mode & 0o777).toString(8)).toBe("600");
    });

    it("npm run deploy without a terminal and without --auto-approve: one line naming it, exit 2, before cdktf starts", async () => {
      const refused = await sh("deploy without --auto-approve", commands.deploy);
      expect(refused.code).toBe(2);
      expect(refused.seconds).toBeLessThan(30);
      expect(refused.stderr.trim()).toBe(
        "npm run deploy: no terminal to ask for approval; add --auto-approve (npm run deploy -- --auto-approve …) to deploy without asking",
      );
    });

    it("npm run deploy --auto-approve creates the stack, DLM policy included; npm run output shows its outputs, one a line", async () => {
      expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain(
        "add `--auto-approve` to `npm run deploy` and `npm run destroy`",
      );
      expectSuccess(await sh("deploy", `${commands.deploy} --auto-approve`));
      expect(dlm.held).toHaveLength(1);
      const output = await sh("npm run output", commands.output);
      expectSuccess(output);
      // Without a terminal, as in a pipe or a CI log: each value whole on its own line, so the command copied pastes.
      const lines = output.output.split("\n");
      const value = (name: string) => lines.find((l) => l.startsWith(`${name} = `));
      expect(value("CrmServerSshCommand")).toMatch(/^CrmServerSshCommand = "ssh ec2-user@\S+"$/);
      expect(value("CrmServerFrontendUrl")).toMatch(/^CrmServerFrontendUrl = "http:\/\/\S+"$/);
      expect(value("CrmServerProvisioningLogCommand")).toMatch(
        /^CrmServerProvisioningLogCommand = "ssh ec2-user@\S+ sudo tail -n \+1 -f \/var\/log\/crm-provisioning\.log"$/,
      );
    });

    it("a setting changed, npm run deploy again completes", async () => {
      const file = join(project, "settings", "example.json");
      const settings = JSON.parse(readFileSync(file, "utf8"));
      writeFileSync(file, JSON.stringify({ ...settings, tags: { CostCenter: "readme-test" } }, null, 2));
      expectSuccess(await sh("deploy after a change", `${commands.change} --auto-approve`));
      const instances = (
        await awsJson(
          [
            "ec2",
            "describe-instances",
            "--filters",
            "Name=tag:CostCenter,Values=readme-test",
            "Name=instance-state-name,Values=running",
          ],
          isolatedMotoEnvironment(server.endpoint, REGION) as Record<string, string>,
        )
      ).Reservations.flatMap((r: { Instances: unknown[] }) => r.Instances);
      expect(instances).toHaveLength(1);
    });

    it("no file left holds a secret readable by others (after diff, deploy, output)", () => {
      const holders = secretHolders();
      expect(holders.map((h) => h.file)).toEqual(expect.arrayContaining([`terraform.${STACK}.tfstate`]));
      expect(holders.filter((h) => h.mode !== "600" || h.dirModes.some((m) => m !== "700"))).toEqual([]);
    });

    it("the keep-the-data destroy: state rm where the README says, then npm run destroy; the volume stays", async () => {
      const statePath = join(project, `terraform.${STACK}.tfstate`);
      const volume = JSON.parse(readFileSync(statePath, "utf8")).resources.find(
        (r: { type: string; name: string }) => r.type === "aws_ebs_volume" && r.name === "crm_data",
      ).instances[0].attributes.id as string;
      expectSuccess(await sh("state rm", commands.keepData.replace("<stack>", STACK)));
      const destroyed = await sh("destroy", `${commands.destroy} --auto-approve`);
      expectSuccess(destroyed);
      // The saved plan (npm run diff's) held the secrets and planned for what is gone: removed. The state backups are
      // the way back: kept, and named with how to wipe them.
      expect(existsSync(join(project, "cdktf.out", "stacks", STACK, "plan"))).toBe(false);
      const backups = [
        `terraform.${STACK}.tfstate.backup`,
        ...readdirSync(join(project, "cdktf.out", "stacks", STACK))
          .filter((name) => /^terraform\.tfstate\.\d+\.backup$/.test(name))
          .map((name) => `cdktf.out/stacks/${STACK}/${name}`),
      ];
      expect(backups).toHaveLength(2);
      expect(destroyed.output).toContain(
        `npm run destroy: removed the saved plan, which held the secrets: cdktf.out/stacks/${STACK}/plan`,
      );
      expect(destroyed.output).toContain(
        `npm run destroy: the state backups left hold the secrets: ${backups.join(" ")}; `,
      );
      expect(destroyed.output).toContain(`wipe them: shred -u ${backups.join(" ")} (or rm)`);
      const awsEnv = isolatedMotoEnvironment(server.endpoint, REGION) as Record<string, string>;
      expect((await awsJson(["ec2", "describe-volumes", "--volume-ids", volume], awsEnv)).Volumes).toHaveLength(1);
      expect(dlm.held).toHaveLength(0);
      const state = JSON.parse(readFileSync(statePath, "utf8"));
      expect(state.resources.filter((r: { mode: string }) => r.mode === "managed")).toEqual([]);
      expect(secretHolders().filter((h) => h.mode !== "600" || h.dirModes.some((m) => m !== "700"))).toEqual([]);
    });
  },
  [
    ...(moto ? [] : ["moto_server"]),
    ...(findProviderSetup() ? [] : ["the project's Terraform CLI configuration ($TF_CLI_CONFIG_FILE, npm run tools)"]),
  ],
);
