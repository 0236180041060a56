/**
 * The image parameter must give an image of an architecture the instance type runs: the stack's own
 * postcondition of data.aws_ami, planned by a real engine on a provider-free stand-in, where variables
 * stand for what the AWS provider would read (the AMI's architecture and id, the instance type's
 * supported architectures).
 */
import { Testing } from "cdktf";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

/** What the provider reads, as the stand-in's variables. */
const READ: Record<string, string> = {
  "self.architecture": "var.image_architecture",
  "self.id": "var.image_id",
  "data.aws_ec2_instance_type.crm_host.supported_architectures": "var.supported_architectures",
};

describeWithEngine("image architecture check, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    const stack = new CrmHostStack(Testing.app(), exampleStackSettings());
    const { variable, data } = JSON.parse(Testing.synth(stack));
    const [check] = data.aws_ami.crm_host.lifecycle.postcondition as { condition: string; error_message: string }[];
    const standIn = (text: string) =>
      Object.entries(READ).reduce((result, [from, to]) => result.split(from).join(to), text);
    expect(standIn(check.condition)).not.toMatch(/self\.|data\./);
    workspace = new EngineWorkspace(engine, {
      variable: {
        image_parameter: variable.image_parameter,
        instance_type: variable.instance_type,
        image_architecture: { type: "string" },
        image_id: { type: "string" },
        supported_architectures: { type: "list(string)" },
      },
      resource: {
        terraform_data: {
          data_aws_ami_crm_host: {
            lifecycle: {
              precondition: [{ condition: standIn(check.condition), error_message: standIn(check.error_message) }],
            },
          },
        },
      },
    });
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it.each([
    ["x86_64", ["x86_64"]],
    ["arm64", ["arm64"]],
    ["i386", ["i386", "x86_64"]],
  ])(
    "plans an image for %s on an instance type that runs %j",
    async (architecture, supported) => {
      const result = await workspace.plan({
        image_architecture: architecture,
        image_id: "ami-0123456789abcdef0",
        supported_architectures: supported,
      });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    },
    60_000,
  );

  it("refuses an arm64 image for t3.micro (x86_64), naming the variable, its value, the image and both architectures", async () => {
    const arm = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64";
    const result = await workspace.plan({
      image_parameter: arm,
      image_architecture: "arm64",
      image_id: "ami-0fedcba9876543210",
      supported_architectures: ["x86_64"],
    });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      'Invalid value for variable "image_parameter": expected the path of an image for an ' +
        `architecture that the instance type t3.micro runs (x86_64); ${arm} gives ami-0fedcba9876543210, built for arm64.`,
    );
  }, 60_000);

  it("names the instance_type given, here an arm64 type with the default x86_64 image", async () => {
    const result = await workspace.plan({
      instance_type: "t4g.small",
      image_architecture: "x86_64",
      image_id: "ami-0123456789abcdef0",
      supported_architectures: ["arm64"],
    });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain(
      "architecture that the instance type t4g.small runs (arm64); " +
        "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64 gives ami-0123456789abcdef0, built for x86_64.",
    );
  }, 60_000);
});
