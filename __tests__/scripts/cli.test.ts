/**
 * The project's commands as a user meets them first: each one's `--help` (every action and option in
 * one line, exit 0), `npm run doctor` (every prerequisite at once, each missing one with its fix; AWS
 * credentials checked by the real AWS CLI against moto's STS; the provider version a Terraform CLI
 * configuration's filesystem mirror lacks, and the CRM_AWS_PROVIDER_VERSION that fits it), `npm run docs` saying what it did, and
 * `npm run scan` on the stacks `npm test` scans, without the user sourcing scripts/ci/env.sh.
 */
import { execFile } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { minVersion, satisfies } from "semver";
import { awsProviderMirror, satisfiesEngines } from "../../scripts/doctor";
import { PINNED_AWS_PROVIDER } from "../../settings/provider-version";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

const ROOT = resolve(__dirname, "../..");

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeout = 120_000): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { cwd: ROOT, env, timeout, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === "number" ? error.code : 124) : 0, stdout, stderr }));
  });
}

const npm = (args: string[], env?: NodeJS.ProcessEnv) => run("npm", ["run", "--silent", ...args], env);

describe("every command answers --help: what it does, each action and option in one line, exit 0", () => {
  it.each([
    ["ops", ["release <ref>", "rollback [release]", "rotate-secrets", "status", "--host <address>", "--accept-new-host-key"]],
    ["secrets", ["set", "rotate", "check", "-h, --help"]],
    ["docs", ["--check", "-h, --help"]],
    ["doctor", ["-h, --help"]],
    ["scan", ["--synth", "--exceptions F", "--allow-unused", "--raw"]],
    ["tools", ["TOOL is any of: terraform checkov actionlint zizmor moto apt boot"]],
    // npm test is npm run test; its --help must not start the suite (the run is bounded all the same).
    ["test", ["usage: npm test", "the VM boot test", "-h, --help"]],
  ])("npm run %s -- --help", async (command, lines) => {
    const result = await npm([command, "--", "--help"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    for (const line of lines) expect(result.stdout.split("\n").filter((text) => text.includes(line)).length).toBeGreaterThan(0);
  });
});

describe("npm test", () => {
  it("refuses an argument it does not know in one line, exit 2, before running anything", async () => {
    const result = await run("npm", ["test", "--silent", "--", "--verbose"], process.env, 30_000);
    expect(result).toEqual({ code: 2, stdout: "", stderr: "check: unknown argument --verbose (npm test takes none; one test file: npx jest <file>)\n" });
  });
});

describe("npm run docs", () => {
  it("says what it did: here, that every generated file is current (--check, which writes nothing)", async () => {
    const result = await npm(["docs", "--", "--check"]);
    expect(result).toEqual({ code: 0, stdout: expect.stringMatching(/^docs: all \d+ generated files are up to date\n$/), stderr: "" });
  });

  it("refuses an option it does not know, exit 2", async () => {
    const result = await npm(["docs", "--", "--chek"]);
    expect(result.code).toBe(2);
    expect(result.stderr.split("\n")[0]).toBe("docs: unknown option --chek");
  });
});

describe("satisfiesEngines (package.json's engines)", () => {
  it.each([
    ["20.19.0", true], ["20.20.2", true], ["20.18.3", false], ["21.7.0", false], ["22.11.0", false], ["22.12.0", false], ["22.13.0", true], ["24.0.0", true], ["26.1.0", true],
  ])("%s: %s", (version, ok) => {
    expect(satisfiesEngines(version, "^20.19.0 || ^22.13.0 || >=24.0.0")).toBe(ok);
  });
});

describe("package.json's engines are true", () => {
  const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { engines?: { node?: string } }> };
  // The lowest release of each supported major, this machine's, and one newer than any today.
  const probes = [...engines.split("||").map((range) => minVersion(range.trim())!.version), process.versions.node, "30.0.0"];

  it("every package npm ci installs admits each Node.js release they admit (npm ci prints no EBADENGINE)", () => {
    for (const version of probes) expect(satisfiesEngines(version, engines) || version === process.versions.node).toBe(true);
    const narrower = Object.entries(lock.packages).flatMap(([name, entry]) => {
      const range = entry.engines?.node;
      return range ? probes.filter((version) => satisfiesEngines(version, engines) && !satisfies(version, range)).map((version) => `${name} (${range}) refuses ${version}`) : [];
    });
    expect(narrower).toEqual([]);
  });
});

describe("npm run doctor", () => {
  let dir: string;
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), "crm-doctor-")); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("on a machine without Terraform, the AWS CLI or ssh: one line each naming the fix, exit 1", async () => {
    // node itself runs the command; PATH holds nothing else, and the tools' cache is elsewhere.
    const result = await run(process.execPath, ["--import", "tsx", "scripts/doctor.ts"],
      { PATH: dir, HOME: dir, CRM_TOOLS_DIR: join(dir, "tools") });
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split("\n");
    // This machine's Node.js is supported, unless the engines say otherwise (CDK Terrain's copy asks for 22.19).
    const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
    const nodeOk = satisfiesEngines(process.versions.node, engines);
    expect(lines).toEqual(expect.arrayContaining([
      nodeOk ? expect.stringMatching(/^ok +Node\.js: \d+\.\d+\.\d+ \(supported: /) : expect.stringMatching(/^MISSING Node\.js: .* is not supported/),
      "MISSING Terraform: not installed (no terraform): install Terraform 1.10.0 or later, or run npm run tools",
      "MISSING AWS CLI: not installed (no aws): install the AWS CLI v2 (https://docs.aws.amazon.com/cli/)",
      expect.stringMatching(/^MISSING AWS credentials: aws sts get-caller-identity failed \(no AWS CLI to ask\): set a profile/),
      "MISSING ssh: not installed (no ssh): install the OpenSSH client; npm run ops needs it",
      "info    checkov: for npm test: not installed (npm run tools installs it)",
    ]));
    expect(lines.pop()).toBe(`doctor: ${nodeOk ? 4 : 5} prerequisite(s) missing: ${nodeOk ? "" : "Node.js, "}Terraform, AWS CLI, AWS credentials, ssh`);
  });

  it("a filesystem mirror (a Terraform CLI configuration's only source of hashicorp/aws) without the pin: the version to set", async () => {
    // A mirror as `terraform providers mirror` leaves one: 5.100.0 unpacked, 6.2.0 packed, 6.99.0 (newer than the tested range) packed.
    const mirror = join(dir, "mirror");
    const aws = join(mirror, "registry.terraform.io", "hashicorp", "aws");
    mkdirSync(join(aws, "5.100.0", "linux_amd64"), { recursive: true });
    for (const version of ["6.2.0", "6.99.0"]) writeFileSync(join(aws, `terraform-provider-aws_${version}_linux_amd64.zip`), "");
    const config = join(dir, "mirror.tfrc");
    writeFileSync(config, `provider_installation {\n  filesystem_mirror {\n    path    = "${mirror}"\n    include = ["registry.terraform.io/hashicorp/aws"]\n  }\n`
      + `  direct {\n    exclude = ["registry.terraform.io/hashicorp/aws"]\n  }\n}\n`);
    const doctor = (extra: NodeJS.ProcessEnv) => run(process.execPath, ["--import", "tsx", "scripts/doctor.ts"],
      { PATH: dir, HOME: dir, CRM_TOOLS_DIR: join(dir, "tools"), TF_CLI_CONFIG_FILE: config, ...extra });
    const providerLine = (result: Run) => result.stdout.split("\n").find((line) => / AWS provider: /.test(line));
    const [pinned, fixed, untested, missing, registry] = await Promise.all([
      doctor({}), doctor({ CRM_AWS_PROVIDER_VERSION: "6.2.0" }), doctor({ CRM_AWS_PROVIDER_VERSION: "6.99.0" }), doctor({ TF_CLI_CONFIG_FILE: join(dir, "none.tfrc") }),
      doctor({ TF_CLI_CONFIG_FILE: "" }),
    ]);
    expect(providerLine(pinned)).toBe(`MISSING AWS provider: the stacks require hashicorp/aws ${PINNED_AWS_PROVIDER}, which the filesystem mirror ${mirror} (${config}) `
      + "lacks (it holds 5.100.0, 6.2.0, 6.99.0): export CRM_AWS_PROVIDER_VERSION=6.2.0");
    expect(pinned.stdout).toMatch(/^doctor: \d prerequisite\(s\) missing: .*AWS provider/m);
    expect(providerLine(fixed)).toBe(`ok      AWS provider: hashicorp/aws 6.2.0, from the filesystem mirror ${mirror} (${config})`);
    expect(providerLine(untested)).toBe(`MISSING AWS provider: CRM_AWS_PROVIDER_VERSION="6.99.0" is not a tested hashicorp/aws version: `
      + `expected an exact version from 5.100.0 to ${PINNED_AWS_PROVIDER} (unset: ${PINNED_AWS_PROVIDER}).`);
    expect(providerLine(missing)).toBe(`ok      AWS provider: hashicorp/aws ${PINNED_AWS_PROVIDER}, from the registry: `
      + `TF_CLI_CONFIG_FILE names ${join(dir, "none.tfrc")}, which does not exist (Terraform warns of it on every command)`);
    // Neither TF_CLI_CONFIG_FILE nor ~/.terraformrc: Terraform's defaults, nothing to say.
    expect(providerLine(registry)).toBe(`ok      AWS provider: hashicorp/aws ${PINNED_AWS_PROVIDER}, from the registry`);
  });

  it("the AWS provider's mirror is the Terraform CLI configuration's only source of hashicorp/aws, or none", () => {
    const mirror = (body: string) => awsProviderMirror(`provider_installation {\n${body}\n}\n`)?.path;
    const fs = (extra = "") => `filesystem_mirror {\n path = "${dir}"\n ${extra}\n}`;
    expect(mirror(fs())).toBe(dir);
    expect(mirror(fs('include = ["hashicorp/*"]'))).toBe(dir);
    expect(mirror(fs('include = ["registry.terraform.io/hashicorp/google"]'))).toBeUndefined();
    expect(mirror(fs('exclude = ["registry.terraform.io/hashicorp/aws"]'))).toBeUndefined();
    expect(mirror(`${fs()}\ndirect {}`)).toBeUndefined();
    expect(mirror(`${fs()}\ndirect {\n exclude = ["registry.terraform.io/*/*"]\n}`)).toBe(dir);
  });

  describeWithTools("with the AWS CLI against moto's STS", findMotoServer() ? [] : ["moto_server"], () => {
    let moto: MotoServer;
    beforeAll(async () => { moto = await MotoServer.start(findMotoServer()!); });
    afterAll(async () => moto?.stop(), TEARDOWN_MS);

    it("credentials that STS accepts: their account; none: the fix", async () => {
      const env = { ...process.env, HOME: dir, AWS_ENDPOINT_URL: moto.endpoint, AWS_DEFAULT_REGION: "us-east-1", AWS_EC2_METADATA_DISABLED: "true" };
      const [given, none] = await Promise.all([
        npm(["doctor"], { ...env, AWS_ACCESS_KEY_ID: "moto", AWS_SECRET_ACCESS_KEY: "moto" }),
        npm(["doctor"], { ...env, AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "", AWS_PROFILE: "" }),
      ]);
      expect(given.stdout).toMatch(/^ok +AWS credentials: account \d{12}, arn:aws:\S+ \(aws sts get-caller-identity\)$/m);
      expect(none.code).toBe(1);
      expect(none.stdout).toMatch(/^MISSING AWS credentials: aws sts get-caller-identity failed \(.+\): set a profile \(AWS_PROFILE, aws configure\)/m);
    });
  });
});

describe("npm run scan, on a fresh shell (no scripts/ci/env.sh sourced)", () => {
  it("scans the default stack and examples/ (the stacks npm test scans): no exception is stale", async () => {
    const tools = join(process.env.CRM_TOOLS_DIR || join(process.env.HOME!, ".cache", "crm-host-tools"), "bin", "checkov");
    if (!existsSync(tools)) {
      if (process.env.CI) throw new Error(`CI must run every test, but npm run scan needs checkov (${tools}; npm run tools installs it)`);
      console.warn("SKIPPED npm run scan: checkov is not installed (npm run tools)");
      return;
    }
    // PATH without the tools' directory, as a new shell after npm run tools has it.
    const path = (process.env.PATH ?? "").split(":").filter((dir) => !dir.includes("crm-host-tools")).join(":");
    const result = await run("npm", ["run", "--silent", "scan"], { ...process.env, PATH: path, CRM_SETTINGS: "" }, 170_000);
    expect(result.stdout + result.stderr).toMatch(/stale-exceptions=0 parsing-errors=0\nscan: OK\n/);
    expect(result.code).toBe(0);
  });
});
