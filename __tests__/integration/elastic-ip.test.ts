/**
 * The Elastic IP at first boot and after: the rendered script, run for real against the harness's
 * metadata stand-in, waits until the metadata service reports the Elastic IP (EC2 associates it only
 * once the instance runs) before it reads the public hostname for FRONTENDURI and BACKENDURI, gives up
 * naming both addresses when it never comes, and the refresh script of later boots does the same.
 */
import { readFileSync } from "fs";
import { ProvisioningHarness, TEST_PUBLIC_HOSTNAME, TEST_PUBLIC_IP } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { ELASTIC_IP_WAIT_SECONDS, refreshScriptPath, renderProvisioningScript } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(120_000);

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64("root-pw"),
  appDbPasswordBase64: b64("app-pw"),
  sourceHostTokenBase64: b64("token"),
};
const ELASTIC_IP = "198.51.100.77";
const ELASTIC_DNS = "ec2-198-51-100-77.compute-1.amazonaws.com";

describeWithTools("the first boot and the Elastic IP, run for real", ProvisioningHarness.toolsMissing(), () => {
  let h: ProvisioningHarness;

  beforeAll(async () => {
    h = await ProvisioningHarness.start({ sourceHostToken: "token" });
  });
  afterAll(async () => h?.stop(), TEARDOWN_MS);
  beforeEach(async () => h.reset());

  const requested = (path: string) => h.metadataRequests.filter((r) => r.path === `/latest/meta-data/${path}`).length;
  const env = () => readFileSync(`${h.settings.appDir}/.env`, "utf8");
  const uris = () =>
    env()
      .split("\n")
      .filter((line) => /^(FRONTENDURI|BACKENDURI)=/.test(line));

  test("reads the hostname at once when the Elastic IP is already the public address", async () => {
    const result = await h.run(renderProvisioningScript(h.settings, SECRETS, "", TEST_PUBLIC_IP));
    expect(result.exitCode).toBe(0);
    expect(result.output).not.toContain("not yet the Elastic IP");
    expect([requested("public-ipv4"), requested("public-hostname")]).toEqual([1, 1]);
    expect(uris()).toEqual([
      `FRONTENDURI=http://${TEST_PUBLIC_HOSTNAME}`,
      `BACKENDURI=http://${TEST_PUBLIC_HOSTNAME}:3000`,
    ]);
  });

  test("waits until the Elastic IP is associated, then writes the URIs of its hostname", async () => {
    // The instance runs with its own address first; EC2 associates the Elastic IP a moment later.
    const associate = setInterval(() => {
      if (requested("public-ipv4") >= 2) {
        h.publicIpv4 = ELASTIC_IP;
        h.publicHostname = ELASTIC_DNS;
        clearInterval(associate);
      }
    }, 50);
    try {
      const result = await h.run(renderProvisioningScript(h.settings, SECRETS, "", ELASTIC_IP));
      expect(result.exitCode).toBe(0);
      expect(result.output).toContain(
        `the public address is ${TEST_PUBLIC_IP}, not yet the Elastic IP ${ELASTIC_IP}; waiting`,
      );
      expect(result.output).toContain(`public hostname: ${ELASTIC_DNS}`);
      expect(requested("public-ipv4")).toBeGreaterThanOrEqual(3);
      expect(uris()).toEqual([`FRONTENDURI=http://${ELASTIC_DNS}`, `BACKENDURI=http://${ELASTIC_DNS}:3000`]);
    } finally {
      clearInterval(associate);
    }
  });

  test("gives up at step 10, naming both addresses, when the Elastic IP never comes", async () => {
    const wait = `ELASTIC_IP_WAIT_SECONDS=${ELASTIC_IP_WAIT_SECONDS}\n`;
    const script = renderProvisioningScript(h.settings, SECRETS, "", ELASTIC_IP);
    expect(script).toContain(wait);
    const result = await h.run(script.replace(wait, "ELASTIC_IP_WAIT_SECONDS=3\n"));
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain(
      `ERROR: the public address is ${TEST_PUBLIC_IP}, not the Elastic IP ${ELASTIC_IP}, after 3 s`,
    );
    expect(result.output).toContain("FAILED: step_10_read_public_hostname");
    expect(requested("public-hostname")).toBe(0);
  });

  test("the refresh script of later boots reads the hostname of the Elastic IP the same way, and rewrites only the URIs", async () => {
    h.publicIpv4 = ELASTIC_IP;
    h.publicHostname = ELASTIC_DNS;
    expect((await h.run(renderProvisioningScript(h.settings, SECRETS, "", ELASTIC_IP))).exitCode).toBe(0);
    const before = env();
    // A stop and start: the Elastic IP stays, so does its name; the refresh finds it at once.
    h.metadataRequests.length = 0;
    const refreshed = await h.run(readFileSync(refreshScriptPath(h.settings), "utf8"));
    expect(refreshed.exitCode).toBe(0);
    expect(env()).toBe(before);
    expect([requested("public-ipv4"), requested("public-hostname")]).toEqual([1, 1]);
    // Had the name changed (an address without an Elastic IP), the refresh would follow it.
    h.publicHostname = "ec2-192-0-2-10.compute-1.amazonaws.com";
    expect((await h.run(readFileSync(refreshScriptPath(h.settings), "utf8"))).exitCode).toBe(0);
    expect(env()).toBe(before.replaceAll(ELASTIC_DNS, "ec2-192-0-2-10.compute-1.amazonaws.com"));
  });
});
