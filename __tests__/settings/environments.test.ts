import { App } from "cdktf";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { synthesize } from "../../main";
import { SettingsError } from "../../settings/errors";
import { loadEnvironments, settingsFiles } from "../../settings/environments";
import { DEFAULT_SETTINGS_FILE } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";

const EXAMPLES = resolve(__dirname, "../../examples");

describe("environments (one stack per settings file)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-environments-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, settings: Record<string, unknown>) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify({ ...exampleSettings, ...settings }));
    return file;
  };

  it("defaults to the example set: one stack, CrmHostStack", () => {
    expect(settingsFiles(undefined)).toEqual([DEFAULT_SETTINGS_FILE]);
    expect(settingsFiles("")).toEqual([DEFAULT_SETTINGS_FILE]);
    expect(loadEnvironments([DEFAULT_SETTINGS_FILE]).map((settings) => settings.stackName)).toEqual(["CrmHostStack"]);
  });

  it("takes a comma-separated list of files and directories; a directory stands for its *.json but JSON Schemas", () => {
    const a = write("a.json", { stackName: "A" });
    mkdirSync(join(dir, "more"));
    writeFileSync(join(dir, "more", "z.json"), "{}");
    writeFileSync(join(dir, "more", "b.json"), "{}");
    writeFileSync(join(dir, "more", "x.schema.json"), "{}");
    writeFileSync(join(dir, "more", "notes.txt"), "");
    expect(settingsFiles(` ${a} , ${join(dir, "more")},${a}`)).toEqual([
      a,
      join(dir, "more", "b.json"),
      join(dir, "more", "z.json"),
    ]);
    expect(settingsFiles("examples").map((file) => file.slice(EXAMPLES.length + 1))).toEqual([
      "dev.json",
      "prod.json",
      "scale-out.json",
    ]);
  });

  it("refuses a directory without settings files", () => {
    mkdirSync(join(dir, "empty"));
    expect(() => settingsFiles(join(dir, "empty"))).toThrow(SettingsError);
    expect(() => settingsFiles(join(dir, "empty"))).toThrow(
      /Invalid setting "CRM_SETTINGS": expected a directory holding settings files/,
    );
  });

  it("ships three environments (the scale-out topology's among them), each with its own stack and state key", () => {
    const environments = loadEnvironments(settingsFiles(EXAMPLES));
    expect(environments.map((settings) => [settings.stackName, settings.backend])).toEqual([
      [
        "CrmHost-dev",
        {
          type: "s3",
          bucket: "crm-host-tfstate-123456789012",
          key: "crm-host/dev/terraform.tfstate",
          region: "us-east-1",
          kmsKeyId: undefined,
          workspaceKeyPrefix: undefined,
        },
      ],
      [
        "CrmHost-prod",
        expect.objectContaining({
          type: "s3",
          key: "crm-host/prod/terraform.tfstate",
          kmsKeyId: expect.stringMatching(/^arn:aws:kms:/),
        }),
      ],
      [
        "CrmHost-scale",
        expect.objectContaining({
          type: "s3",
          key: "crm-host/scale/terraform.tfstate",
          kmsKeyId: expect.stringMatching(/^arn:aws:kms:/),
        }),
      ],
    ]);
  });

  it("synthesizes every environment side by side in one run", () => {
    const outdir = join(dir, "out");
    synthesize(new App({ outdir }), loadEnvironments(settingsFiles(EXAMPLES)));
    const stack = (name: string) => JSON.parse(readFileSync(join(outdir, "stacks", name, "cdk.tf.json"), "utf8"));
    expect(stack("CrmHost-dev").terraform.backend.s3).toMatchObject({
      key: "crm-host/dev/terraform.tfstate",
      encrypt: true,
      use_lockfile: true,
    });
    expect(stack("CrmHost-prod").terraform.backend.s3).toMatchObject({
      key: "crm-host/prod/terraform.tfstate",
      encrypt: true,
      use_lockfile: true,
    });
    expect(stack("CrmHost-scale").terraform.backend.s3).toMatchObject({
      key: "crm-host/scale/terraform.tfstate",
      encrypt: true,
      use_lockfile: true,
    });
    expect(Object.keys(JSON.parse(readFileSync(join(outdir, "manifest.json"), "utf8")).stacks).sort()).toEqual([
      "CrmHost-dev",
      "CrmHost-prod",
      "CrmHost-scale",
    ]);
  });

  it("refuses two files with one stack name, naming both", () => {
    const a = write("a.json", { stackName: "Same" });
    const b = write("b.json", { stackName: "Same" });
    expect(() => loadEnvironments([a, b])).toThrow(
      `Invalid setting "stackName": expected a name that no other settings file uses, ignoring case (${a} and ${b} both name Same).`,
    );
  });

  it("refuses two stack names that differ only in case (one folder on macOS and Windows), and two such local states", () => {
    const a = write("a.json", { stackName: "CrmStaging" });
    const b = write("b.json", { stackName: "crmstaging" });
    expect(() => loadEnvironments([a, b])).toThrow(
      `Invalid setting "stackName": expected a name that no other settings file uses, ignoring case (${a} and ${b} both name CrmStaging and crmstaging).`,
    );
    const c = write("c.json", { stackName: "C", backend: { path: "../../../State.tfstate" } });
    const d = write("d.json", { stackName: "D", backend: { path: "../../../state.tfstate" } });
    expect(() => loadEnvironments([c, d])).toThrow(
      /Invalid setting "backend.path": expected a state of its own \(.*c\.json and .*d\.json both keep their state in .*state\.tfstate\)/,
    );
  });

  it("refuses two environments that would share one state", () => {
    const backend = { type: "s3", bucket: "crm-state", key: "shared.tfstate" };
    const a = write("a.json", { stackName: "A", backend });
    const b = write("b.json", { stackName: "B", backend });
    expect(() => loadEnvironments([a, b])).toThrow(
      /Invalid setting "backend.key": expected a state of its own \(.*a\.json and .*b\.json both keep their state in s3:\/\/crm-state\/shared\.tfstate\)/,
    );
    const c = write("c.json", { stackName: "C", backend: { path: "../../../shared.tfstate" } });
    const d = write("d.json", { stackName: "D", backend: { path: "../../../shared.tfstate" } });
    expect(() => loadEnvironments([c, d])).toThrow(/Invalid setting "backend.path": expected a state of its own/);
    // Same key in different buckets, or the default keys: distinct states.
    const e = write("e.json", {
      stackName: "E",
      backend: { type: "s3", bucket: "other-bucket", key: "shared.tfstate" },
    });
    expect(loadEnvironments([a, e])).toHaveLength(2);
  });

  it("names the file of a bad setting", () => {
    const bad = write("bad.json", { region: "mars" });
    expect(() => loadEnvironments([DEFAULT_SETTINGS_FILE, bad])).toThrow(
      `${bad}: Invalid setting "region" (got "mars")`,
    );
  });
});
