/**
 * The engine itself builds the user data: Terraform evaluates the local that holds the script
 * with adversarial secrets (apply on a local backend, read back through a sensitive output),
 * and the script it produced is run through the provisioning harness against a real MariaDB.
 */
import { TerraformOutput } from "cdktf";
import { ProvisioningUserData } from "../../constructs/provisioning-user-data";
import { SecretVariables } from "../../constructs/secret-variables";
import { existsSync } from "fs";
import { gunzipSync } from "zlib";
import { nativePasswordHash, ProvisioningHarness } from "../support/provisioning-harness";
import { synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, tfVars } from "../support/terraform-engine";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

// Terraform template syntax, shell metacharacters and SQL in the values: all must stay data.
const ROOT_PASSWORD = `R00t %{if true}x%{endif} \${var.app_db_password} '"\`id\`\\ $(touch /tmp/pwned-engine)`;
const APP_PASSWORD = `app '; DROP USER root@localhost; -- "$HOME" \${jsonencode(1)} 100% {}`;
const TOKEN = "ghp_Engine/Token+With=Odd&Chars%41";

describeWithEngine(
  "user data evaluated by a real engine",
  (engine) => {
    let harness: ProvisioningHarness;
    let workspace: EngineWorkspace;
    let script = "";
    let base64 = "";

    beforeAll(async () => {
      harness = await ProvisioningHarness.start({ sourceHostToken: TOKEN });
      // The stack's own constructs, with the harness's paths, and outputs in place of the instance.
      const { json } = synthesize((scope) => {
        const secrets = new SecretVariables(scope, "secrets");
        const userData = new ProvisioningUserData(scope, "user_data", {
          settings: harness.settings,
          secrets: secrets.scriptSecrets,
        });
        new TerraformOutput(scope, "script", { value: userData.script, sensitive: true });
        new TerraformOutput(scope, "script_base64", { value: userData.base64, sensitive: true });
      });
      workspace = new EngineWorkspace(engine, json);
      await workspace.init();
      const env = tfVars({ db_root_password: ROOT_PASSWORD, app_db_password: APP_PASSWORD, source_host_token: TOKEN });
      const applied = await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"], env);
      if (applied.code !== 0) throw new Error(`terraform apply failed:\n${applied.stdout}\n${applied.stderr}`);
      // Nothing secret in what apply printed: the outputs are sensitive.
      for (const secret of [ROOT_PASSWORD, APP_PASSWORD, TOKEN])
        expect(applied.stdout + applied.stderr).not.toContain(secret);
      script = (await workspace.run(["output", "-raw", "script"])).stdout;
      base64 = (await workspace.run(["output", "-raw", "script_base64"])).stdout;
    });

    afterAll(async () => {
      workspace?.remove();
      await harness?.stop();
    }, TEARDOWN_MS);

    it("renders a bash script whose gzip, in base64, is what the instance receives (cloud-init inflates it)", () => {
      expect(script.startsWith("#!/bin/bash\n")).toBe(true);
      const compressed = Buffer.from(base64, "base64");
      expect(compressed.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      expect(gunzipSync(compressed).toString("utf8")).toBe(script);
      expect(compressed.length).toBeLessThan(16 * 1024);
      // Template sequences of the shell text came through literally, not evaluated or doubled.
      expect(script).not.toContain("$${");
      expect(script).toContain("${");
    });

    it("carries each secret only as base64, decoded by the script at boot", () => {
      for (const secret of [ROOT_PASSWORD, APP_PASSWORD, TOKEN]) {
        expect(script).not.toContain(secret);
        expect(script).toContain(`'${Buffer.from(secret).toString("base64")}'`);
      }
    });

    it("provisions for real: the app user logs in with exactly the password given to Terraform", async () => {
      const result = await harness.run(script);
      if (result.exitCode !== 0) console.error(result.output);
      expect(result.exitCode).toBe(0);
      expect(await harness.canLogin(harness.settings.appDbUser, APP_PASSWORD)).toBe(true);
      expect(await harness.canLogin(harness.settings.appDbUser, `${APP_PASSWORD} `)).toBe(false);
      const rootPrivileges = await harness.query(
        "SELECT Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost'",
      );
      expect(rootPrivileges).toContain(nativePasswordHash(ROOT_PASSWORD));
      expect(existsSync("/tmp/pwned-engine")).toBe(false);
      for (const secret of [ROOT_PASSWORD, APP_PASSWORD, TOKEN]) expect(result.output).not.toContain(secret);
    });
  },
  ProvisioningHarness.toolsMissing(),
);
