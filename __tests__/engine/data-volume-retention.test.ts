/**
 * The data volume's protection is a Terraform lifecycle rule, enforced by the engine, not by
 * AWS: so it is proven here on a real engine, with provider-free stand-ins (`terraform_data`)
 * under the stack's own resource names, carrying the lifecycle blocks the stack synthesizes.
 */
import { Testing } from "cdktf";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineResult, EngineWorkspace, flatten } from "../support/terraform-engine";

/** Names and lifecycle blocks of the volume, the instance and the attachment, as the stack synthesizes them. */
function synthesizedParts(deleteDataVolumeOnDestroy: boolean) {
  const stack = new CrmHostStack(Testing.app(), exampleStackSettings({ deleteDataVolumeOnDestroy }));
  const { resource } = JSON.parse(Testing.synth(stack));
  const one = (type: string): [string, any] => {
    const entries = Object.entries(resource[type] as Record<string, any>);
    expect(entries).toHaveLength(1);
    return entries[0];
  };
  return { volume: one("aws_ebs_volume"), instance: one("aws_instance"), attachment: one("aws_volume_attachment") };
}

/**
 * A provider-free configuration with the same dependencies and lifecycle rules, each resource
 * named `<its type>_<its name>` (one type, terraform_data, stands in for all three).
 */
function standIn(deleteDataVolumeOnDestroy: boolean) {
  const { volume, instance, attachment } = synthesizedParts(deleteDataVolumeOnDestroy);
  const [volumeName, instanceName, attachmentName] = [
    `aws_ebs_volume_${volume[0]}`,
    `aws_instance_${instance[0]}`,
    `aws_volume_attachment_${attachment[0]}`,
  ];
  const configuration = {
    resource: {
      terraform_data: {
        [volumeName]: { input: "data volume", lifecycle: volume[1].lifecycle },
        // The instance's user data names the volume: the volume exists first.
        [instanceName]: { input: `\${terraform_data.${volumeName}.id}` },
        // volume_id and instance_id force a new aws_volume_attachment: triggers_replace does here.
        [attachmentName]: {
          triggers_replace: {
            volume: `\${terraform_data.${volumeName}.id}`,
            instance: `\${terraform_data.${instanceName}.id}`,
          },
        },
      },
    },
  };
  return { configuration, volumeName, instanceName, attachmentName };
}

const APPLY = ["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"];
const DESTROY = ["destroy", "-auto-approve", "-input=false", "-no-color", "-lock=false"];

async function stateList(workspace: EngineWorkspace): Promise<string[]> {
  const result = await workspace.run(["state", "list"]);
  return result.stdout.split("\n").filter(Boolean).sort();
}

async function idOf(workspace: EngineWorkspace, address: string): Promise<string> {
  const result = await workspace.run(["state", "show", "-no-color", address]);
  const match = /\bid\s+=\s+"([^"]+)"/.exec(result.stdout);
  if (!match) throw new Error(`no id for ${address}:\n${result.stdout}${result.stderr}`);
  return match[1];
}

function expectOk(result: EngineResult): void {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
}

/** A workspace with the configuration applied before the tests of the enclosing block, removed after them. */
function appliedWorkspace(engine: string, configuration: object): () => EngineWorkspace {
  let workspace: EngineWorkspace | undefined;
  beforeAll(async () => {
    workspace = new EngineWorkspace(engine, configuration);
    await workspace.init();
    expectOk(await workspace.run(APPLY));
  }, 60_000);
  afterAll(() => workspace?.remove());
  return () => {
    if (!workspace) throw new Error("the workspace was not set up");
    return workspace;
  };
}

describeWithEngine("data volume kept on destroy, on a real engine", (engine) => {
  describe("by default (deleteDataVolumeOnDestroy false)", () => {
    const { configuration, volumeName, instanceName, attachmentName } = standIn(false);
    const volume = `terraform_data.${volumeName}`;
    const instance = `terraform_data.${instanceName}`;
    const attachment = `terraform_data.${attachmentName}`;
    const workspace = appliedWorkspace(engine, configuration);

    it("refuses terraform destroy, naming the volume, and destroys nothing", async () => {
      const result = await workspace().run(DESTROY);
      expect(result.code).not.toBe(0);
      expect(flatten(result.stderr)).toContain(`Resource ${volume} has lifecycle.prevent_destroy set`);
      expect(await stateList(workspace())).toEqual([attachment, instance, volume].sort());
    }, 60_000);

    it("refuses any plan that would replace the volume", async () => {
      const result = await workspace().run(["plan", "-no-color", "-lock=false", `-replace=${volume}`]);
      expect(result.code).not.toBe(0);
      expect(flatten(result.stderr)).toContain("Instance cannot be destroyed");
    }, 60_000);

    it("replaces the host deliberately (-replace) while the volume stays, and attaches it to the new host", async () => {
      const [volumeBefore, hostBefore] = [await idOf(workspace(), volume), await idOf(workspace(), instance)];
      const result = await workspace().run([...APPLY, `-replace=${instance}`]);
      expectOk(result);
      expect(result.stdout).toMatch(/2 added, 0 changed, 2 destroyed/);
      expect(await idOf(workspace(), volume)).toBe(volumeBefore);
      expect(await idOf(workspace(), instance)).not.toBe(hostBefore);
    }, 60_000);

    it("destroys everything else once the volume is removed from the state (the README's procedure)", async () => {
      expectOk(await workspace().run(["state", "rm", "-lock=false", volume]));
      const result = await workspace().run(DESTROY);
      expectOk(result);
      expect(result.stdout).toMatch(/Destroy complete! Resources: 2 destroyed/);
      expect(await stateList(workspace())).toEqual([]);
    }, 60_000);
  });

  describe("opted in (deleteDataVolumeOnDestroy true)", () => {
    const { configuration } = standIn(true);
    const workspace = appliedWorkspace(engine, configuration);

    it("destroys the volume with the rest", async () => {
      const result = await workspace().run(DESTROY);
      expectOk(result);
      expect(result.stdout).toMatch(/Destroy complete! Resources: 3 destroyed/);
      expect(await stateList(workspace())).toEqual([]);
    }, 60_000);
  });
});
