/**
 * The parameter-store mode of the provisioning script, run for real (bash, as root) by the harness:
 * the machine's real AWS CLI reads the parameters from moto's server with the role credentials of the
 * metadata stand-in. A missing parameter stops the run before any step; once it is there, the run
 * provisions with the parameters' values and logs none; the rotate command then applies new values.
 */
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { spawnSync } from "child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "fs";
import { join } from "path";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { renderProvisioningScript, STEP_FUNCTIONS } from "../../userdata";
import { SecretParameterNames } from "../../settings/provisioning-settings";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { nativePasswordHash, ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

const REGION = "us-east-1";
const NAMES = { region: REGION, ...secretParameterNames("CrmHostStack") } satisfies SecretParameterNames;
const FIRST = {
  root: `r00t '"$HOME \`id\` \\ %s $(touch /tmp/pwned-ps-root)`,
  app: `it's "$USER" \`whoami\` 100% {}'; DROP DATABASE crm_test; -- é`,
  token: `ghp_ParamStore:/?[]@!$&'()*+,;= %{x}`,
};
const ROTATED = { root: `new root ${Date.now()} '"`, app: `new-app-${Date.now()}`, token: `ghp_Rotated${Date.now()}` };
const forms = (values: Record<string, string>) =>
  Object.values(values).flatMap((value) => [
    value,
    encodeURIComponent(value),
    Buffer.from(value).toString("base64"),
    Buffer.from(value).toString("hex"),
  ]);

const awsMissing = spawnSync("bash", ["-c", "command -v aws"]).status === 0 ? [] : ["the AWS CLI (aws)"];
const motoServer = findMotoServer();

describeWithTools(
  "provisioning script in parameter-store mode, run for real against moto",
  [...ProvisioningHarness.toolsMissing(), ...(motoServer ? [] : ["moto_server"]), ...awsMissing],
  () => {
    let moto: MotoServer;
    let ssm: SSMClient;
    let h: ProvisioningHarness;
    let script: string;
    let missing: RunResult;
    let provisioned: RunResult;

    const put = (name: string, value: string) =>
      ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: "SecureString", Overwrite: true }));

    beforeAll(async () => {
      moto = await MotoServer.start(motoServer!);
      ssm = new SSMClient({
        region: REGION,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
      // The app's unit runs server.js for real: rotate-secrets restarts it and waits for its answer (restart_app).
      h = await ProvisioningHarness.start({ sourceHostToken: FIRST.token, awsEndpoint: moto.endpoint, app: true });
      script = renderProvisioningScript(h.settings, NAMES);
      await put(NAMES.dbRootPassword, FIRST.root);
      await put(NAMES.sourceHostToken, FIRST.token);
      missing = await h.run(script);
      await put(NAMES.appDbPassword, FIRST.app);
      provisioned = await h.run(script);
      if (provisioned.exitCode !== 0) console.error(provisioned.output);
    });

    afterAll(async () => {
      ssm?.destroy();
      await h?.stop();
      await moto?.stop();
    }, TEARDOWN_MS);

    test("the user data holds the parameters' names and no secret", () => {
      expect(script).toContain(`readonly APP_DB_PASSWORD_PARAMETER='${NAMES.appDbPassword}'`);
      expect(forms(FIRST).filter((form) => script.includes(form))).toEqual([]);
    });

    test("a missing parameter stops the run before any step, naming it, in the output and the log", () => {
      expect(missing.exitCode).toBe(1);
      const message = `missing in Parameter Store (${REGION}): ${NAMES.appDbPassword}; put them`;
      expect(missing.output).toContain(message);
      expect(readFileSync(h.settings.logFile, "utf8")).toContain(message);
      expect(missing.output).not.toContain("START step_01");
      // Nothing but Parameter Store (the modules, then the secrets) and the metadata's Region and token the modules' read takes.
      expect(
        missing.newCalls.filter(
          (call) =>
            !call.startsWith("aws ") && !/^curl .*\/latest\/(api\/token|meta-data\/placement\/region)$/.test(call),
        ),
      ).toEqual([]);
    });

    test("with all three, the run provisions with the parameters' values", async () => {
      expect(provisioned.exitCode).toBe(0);
      for (const step of STEP_FUNCTIONS) expect(provisioned.output).toContain(`DONE ${step}`);
      expect(provisioned.output).toContain(
        `secrets read from Parameter Store (${REGION}): ${NAMES.dbRootPassword} ${NAMES.appDbPassword} ${NAMES.sourceHostToken}`,
      );
      expect(await h.canLogin(h.settings.appDbUser, FIRST.app)).toBe(true);
      expect(await h.query("SELECT Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost'")).toContain(
        nativePasswordHash(FIRST.root),
      );
      expect(h.gitRequests.some((request) => request.authorized)).toBe(true);
      expect(existsSync("/tmp/pwned-ps-root")).toBe(false);
    });

    test("the AWS CLI got names only: no value in its arguments, and none in the output or the log", () => {
      const awsCalls = provisioned.calls.filter((call) => call.startsWith("aws "));
      expect(awsCalls.length).toBeGreaterThanOrEqual(2);
      expect(awsCalls.at(-1)).toContain(
        `ssm get-parameters --region ${REGION} --with-decryption --names ${NAMES.dbRootPassword}`,
      );
      const texts = [
        ...provisioned.calls,
        provisioned.output,
        missing.output,
        readFileSync(h.settings.logFile, "utf8"),
      ];
      expect(forms(FIRST).filter((form) => texts.some((text) => text.includes(form)))).toEqual([]);
    });

    test("the ops command's rotate-secrets applies new values: old passwords refused, new ones work, .env updated, the app restarted", async () => {
      expect((statSync(`${h.opsCommand}.conf`).mode & 0o777).toString(8)).toBe("600");
      await put(NAMES.dbRootPassword, ROTATED.root);
      await put(NAMES.appDbPassword, ROTATED.app);
      await put(NAMES.sourceHostToken, ROTATED.token);
      h.sourceHostToken = ROTATED.token;
      const rotated = await h.runCommand(h.opsCommand, ["rotate-secrets"]);
      expect({ code: rotated.exitCode, output: rotated.output }).toEqual({
        code: 0,
        output: expect.stringContaining("secrets rotated"),
      });
      // runCommand installed the tool first, as npm run ops does.
      expect((statSync(h.opsCommand).mode & 0o777).toString(8)).toBe("700");
      expect(await h.canLogin(h.settings.appDbUser, ROTATED.app)).toBe(true);
      expect(await h.canLogin(h.settings.appDbUser, FIRST.app)).toBe(false);
      const root = await h.query("SELECT Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost'");
      expect(root).toContain(nativePasswordHash(ROTATED.root));
      expect(root).not.toContain(nativePasswordHash(FIRST.root));
      expect(root).toContain("unix_socket");
      expect(readFileSync(`${h.settings.appDir}/.env`, "utf8")).toContain(`DB_PASSWORD=${ROTATED.app}\n`);
      expect(rotated.newCalls).toContain(`systemctl restart ${h.settings.appName}.service`);
      const log = readFileSync(h.settings.logFile, "utf8");
      expect(
        forms({ ...FIRST, ...ROTATED }).filter((form) =>
          [rotated.output, log, ...rotated.calls].some((text) => text.includes(form)),
        ),
      ).toEqual([]);
    });

    test("a token the source host refuses stops the rotation before anything changes", async () => {
      await put(NAMES.appDbPassword, `never-applied-${Date.now()}`);
      await put(NAMES.sourceHostToken, "ghp_Refused");
      // No pauses between the git tries (the tool's configuration holds the script's retry settings, as readonly -p prints them).
      const conf = readFileSync(`${h.opsCommand}.conf`, "utf8");
      expect(conf).toContain('declare -r PAUSE="10"\n');
      const quick = join(h.dir, "ops-without-pauses");
      writeFileSync(quick, readFileSync(h.opsCommand, "utf8"), { mode: 0o700 });
      writeFileSync(`${quick}.conf`, conf.replace('declare -r PAUSE="10"\n', 'declare -r PAUSE="0"\n'), {
        mode: 0o600,
      });
      const refused = await h.runCommand(quick, ["rotate-secrets"]);
      expect(refused.exitCode).not.toBe(0);
      expect(refused.output).toContain(
        `the source host refuses the token in ${NAMES.sourceHostToken}; nothing changed`,
      );
      expect(await h.canLogin(h.settings.appDbUser, ROTATED.app)).toBe(true);
      // Neither the app's unit nor the database's (the front's install before the action is another matter: ensure_front).
      expect(
        refused.newCalls.filter(
          (call) => call.startsWith("systemctl") && (call.includes(h.settings.appName) || call.includes("mariadb")),
        ),
      ).toEqual([]);
    });
  },
);
