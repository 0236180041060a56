/**
 * A single host with a domain whose certificate Let's Encrypt issues needs the public internet on ports 80
 * and 443 (its validation comes from there): the plan refuses an app_ingress_cidrs without 0.0.0.0/0, naming
 * the variable. The stack's own app_ingress_cidrs block, planned by a real engine.
 */
import { Testing } from "cdktf";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

const domain = { hostedZone: "example.com", name: "crm.example.com" };

/** The stack's app_ingress_cidrs variable block, as synthesized with these settings. */
function appIngressVariable(changes: Record<string, unknown>): object {
  const { variable } = JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), exampleStackSettings(changes))));
  return { variable: { app_ingress_cidrs: variable.app_ingress_cidrs } };
}

describeWithEngine("app_ingress_cidrs beside a Let's Encrypt domain, planned by a real engine", (engine) => {
  const workspaces: EngineWorkspace[] = [];
  async function workspace(changes: Record<string, unknown>): Promise<EngineWorkspace> {
    const made = new EngineWorkspace(engine, appIngressVariable(changes));
    workspaces.push(made);
    await made.init();
    return made;
  }
  afterAll(() => workspaces.forEach((made) => made.remove()));

  it("refuses a list without 0.0.0.0/0, naming the variable and why; takes one with it", async () => {
    const letsEncrypt = await workspace({ domain });
    const narrow = await letsEncrypt.plan({ app_ingress_cidrs: ["203.0.113.0/24"] });
    expect(narrow.code).not.toBe(0);
    expect(flatten(narrow.stderr)).toContain(
      'Invalid value for variable "app_ingress_cidrs": expected a list holding 0.0.0.0/0 with a domain whose certificate Let\'s Encrypt issues',
    );
    const open = await letsEncrypt.plan({ app_ingress_cidrs: ["0.0.0.0/0", "203.0.113.0/24"] });
    expect({ code: open.code, stderr: open.stderr }).toEqual({ code: 0, stderr: "" });
  }, 120_000);

  it("leaves a narrow list alone without a domain, or with a CA of one's own (which may validate from inside)", async () => {
    for (const changes of [
      {},
      { domain: { ...domain, acmeDirectory: "https://acme.internal.example.com/directory" } },
    ]) {
      const result = await (await workspace(changes)).plan({ app_ingress_cidrs: ["10.0.0.0/8"] });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    }
  }, 120_000);
});
