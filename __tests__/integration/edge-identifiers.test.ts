/**
 * Database names and users at the edges of their rules, run for real against MariaDB: the longest
 * name with `_` (a wildcard in GRANT, which the script escapes: the app's account gets its one
 * database, not every name the pattern matches, such as one of MariaDB's own schemas; escaped, the
 * name must still fit MariaDB's 64 characters), and a user named by an SQL reserved word.
 */
import { ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { renderProvisioningScript } from "../../userdata";
import { ScriptSecrets, validateProvisioningSettings } from "../../settings/provisioning-settings";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

const APP_PASSWORD = "app-Pass-0123";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const TOKEN = "ghp_edge-identifiers-0123";
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64("root-Pass-0123"),
  appDbPasswordBase64: b64(APP_PASSWORD),
  sourceHostTokenBase64: b64(TOKEN),
};
/** The longest name with `_`: 64 characters once GRANT writes each `_` as `\_`. */
const DATABASE = `${"crm_".repeat(12)}abcd`;
/** What `DATABASE` matches as a GRANT pattern, besides itself. */
const LOOKALIKE = DATABASE.replace(/_/g, "x");
const USER = "update";

describeWithTools("database names and users at the edges, run for real", ProvisioningHarness.toolsMissing(), () => {
  let h: ProvisioningHarness;
  let run: RunResult;

  beforeAll(async () => {
    h = await ProvisioningHarness.start({ sourceHostToken: TOKEN });
    const settings = { ...h.settings, databaseName: DATABASE, appDbUser: USER };
    validateProvisioningSettings(settings);
    run = await h.run(renderProvisioningScript(settings, SECRETS));
    if (run.exitCode !== 0) console.error(run.output);
  });
  afterAll(async () => {
    await h?.stop();
  }, TEARDOWN_MS);

  test("the script succeeds with them", () => {
    expect(run.exitCode).toBe(0);
  });

  test("the app's account is granted its database only, the wildcard _ escaped", async () => {
    // The grant's database pattern, each _ escaped (the client's batch output writes a backslash as \\).
    expect(await h.query(`SELECT Db FROM mysql.db WHERE User = '${USER}';`)).toBe(DATABASE.replace(/_/g, "\\\\_"));
    await h.query(`CREATE DATABASE \`${LOOKALIKE}\`;`);
    expect(
      await h.queryAs(USER, APP_PASSWORD, `USE \`${DATABASE}\`; CREATE TABLE t (id INT); SELECT COUNT(*) FROM t;`),
    ).toBe("0");
    await expect(h.queryAs(USER, APP_PASSWORD, `USE \`${LOOKALIKE}\`; SELECT 1;`)).rejects.toThrow(/Access denied/);
  });
});
