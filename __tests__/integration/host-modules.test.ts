/**
 * The first boot's modules (userdata/script.ts, hostModules), which ride in Parameter Store, not in the user data:
 * the rendered script, run for real with the aws stand-in's Parameter Store (the harness puts what a deploy puts),
 * reads them in one call before anything else, keeps each by the sha256 its header names, and runs from its own copies
 * when it runs again (reprovision), whatever a later deploy put in the parameters. A parameter that is missing, holds
 * another version or cannot be read stops the first boot before step 1, naming it, after the network's retries.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { join } from "path";
import { gzipSync } from "zlib";
import { ProvisioningHarness } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { hostModules, renderProvisioningScript } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { TEARDOWN_MS } from "../support/teardown";
import { modulesNamed } from "../support/harness/module-parameters";

jest.setTimeout(120_000);

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64("root-pw"),
  appDbPasswordBase64: b64("app-pw"),
  sourceHostTokenBase64: b64("token"),
};

describeWithTools(
  "the first boot's modules from Parameter Store, run for real",
  ProvisioningHarness.toolsMissing(),
  () => {
    let h: ProvisioningHarness;
    let script: string;

    beforeAll(async () => {
      h = await ProvisioningHarness.start({ sourceHostToken: "token" });
      script = renderProvisioningScript(h.settings, SECRETS);
    });
    afterAll(async () => h?.stop(), TEARDOWN_MS);
    beforeEach(async () => h.reset());

    const kept = () => (existsSync(h.host.moduleDirectory) ? readdirSync(h.host.moduleDirectory).sort() : []);
    const awsCalls = (calls: string[]) => calls.filter((line) => line.startsWith("aws "));
    const parameter = (module: string) => join(h.parametersDir, `/${h.settings.appName}/modules/${module}`);
    /** The script, run after a deploy put its parameters and `change` changed them. */
    const runWith = async (change: () => void) => {
      await h.putModules(script);
      change();
      return h.run(script, { retryPauseSeconds: 0, keepParameters: true });
    };

    test("reads every module in one call before step 1, keeps each by its sha256, mode 600 in a 700 directory", async () => {
      const result = await h.run(script);
      expect(result.exitCode).toBe(0);
      const modules = hostModules(h.settings);
      expect(awsCalls(result.newCalls)).toEqual([
        `aws ssm get-parameters --region us-east-1 --names ${modules.map((m) => `/crm-test/modules/${m.module}`).join(" ")} ` +
          "--query Parameters[].[Name,Value] --output text",
      ]);
      expect(result.newCalls.findIndex((line) => line.startsWith("aws "))).toBeLessThan(
        result.newCalls.findIndex((line) => line.startsWith("dnf ")),
      );
      expect(kept()).toEqual(modules.map((m) => `${m.sha256}.sh`).sort());
      for (const module of modules) {
        expect(readFileSync(join(h.host.moduleDirectory, `${module.sha256}.sh`), "utf8")).toBe(module.code);
        expect(statSync(join(h.host.moduleDirectory, `${module.sha256}.sh`)).mode & 0o777).toBe(0o600);
      }
      expect(statSync(h.host.moduleDirectory).mode & 0o777).toBe(0o700);
      expect(
        modulesNamed(script)
          .map((m) => m.sha256)
          .sort(),
      ).toEqual(modules.map((m) => m.sha256).sort());
    });

    test("runs again from its own copies after a later deploy changed a parameter (reprovision), asking Parameter Store nothing", async () => {
      expect((await h.run(script)).exitCode).toBe(0);
      const later = await runWith(() => writeFileSync(parameter("telemetry"), b64("a later version\n")));
      expect(later.exitCode).toBe(0);
      expect(awsCalls(later.newCalls)).toEqual([]);
    });

    test("reads again a module whose kept copy was damaged, and only that one", async () => {
      expect((await h.run(script)).exitCode).toBe(0);
      const telemetry = hostModules(h.settings).find((m) => m.module === "telemetry")!;
      writeFileSync(join(h.host.moduleDirectory, `${telemetry.sha256}.sh`), telemetry.code.slice(0, 100));
      const again = await h.run(script);
      expect(again.exitCode).toBe(0);
      expect(awsCalls(again.newCalls)).toEqual([
        `aws ssm get-parameters --region us-east-1 --names /crm-test/modules/telemetry ` +
          "--query Parameters[].[Name,Value] --output text",
      ]);
      expect(readFileSync(join(h.host.moduleDirectory, `${telemetry.sha256}.sh`), "utf8")).toBe(telemetry.code);
    });

    test("stops before step 1, naming the parameter, when it holds another version (a host older than its stack), keeping nothing of it", async () => {
      const other = gzipSync("telemetry_main() { :; }\n").toString("base64");
      const result = await runWith(() => writeFileSync(parameter("telemetry"), other));
      expect(result.exitCode).not.toBe(0);
      const sha = modulesNamed(script).find((m) => m.name.endsWith("/telemetry"))!.sha256;
      expect(result.output).toContain(`/crm-test/modules/telemetry: missing, or not the version of sha256 ${sha}`);
      expect(result.output).toContain("reading the modules from Parameter Store failed 5 times");
      expect(result.output).toContain(
        "ERROR: the modules are not in Parameter Store (/crm-test/modules) as this user data names them (see above): " +
          "deploy the stack, or replace a host older than its stack",
      );
      expect(awsCalls(result.newCalls)).toHaveLength(5);
      expect(result.newCalls.filter((line) => line.startsWith("dnf "))).toEqual([]);
      expect(kept()).not.toContain(`${sha}.sh`);
      expect(kept().filter((name) => !name.endsWith(".sh"))).toEqual([]);
    });

    test("stops the same way when a parameter is missing, and when Parameter Store does not answer", async () => {
      const missing = await runWith(() => rmSync(parameter("ops")));
      expect(missing.exitCode).not.toBe(0);
      expect(missing.output).toContain("/crm-test/modules/ops: missing, or not the version of sha256 ");
      expect(missing.newCalls.filter((line) => line.startsWith("dnf "))).toEqual([]);

      await h.reset();
      h.fault = "modules-unreachable";
      const unreachable = await h.run(script, { retryPauseSeconds: 0 });
      expect(unreachable.exitCode).not.toBe(0);
      expect(unreachable.output).toContain("injected fault: modules-unreachable");
      expect(unreachable.output).toContain("ERROR: the modules are not in Parameter Store (/crm-test/modules)");
      expect(awsCalls(unreachable.newCalls)).toHaveLength(5);
      expect(kept()).toEqual([]);
    });
  },
);
