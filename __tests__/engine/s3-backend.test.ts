/**
 * The S3 state backend, for real: a provider-free stack built from the stack's own constructs
 * (StateBackend, BootstrapVersionCheck, required_version) initializes against moto's S3 on
 * loopback, applies, keeps its state in the bucket encrypted, refuses a second apply while the
 * first holds S3's lock file, and is found again by `terraform init` in a clean directory.
 * Only the endpoint of the S3 service differs from a deploy, given at `terraform init` as
 * partial backend configuration: the synthesized backend block is the stack's, unchanged.
 */
import { TerraformStack, Testing } from "cdktf";
import { writeFileSync } from "fs";
import { join } from "path";
import { StateBackend } from "../../constructs/state-backend";
import { MINIMUM_TERRAFORM_VERSION } from "../../main";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { bootstrapCheck } from "../support/synth";
import { describeWithEngine, EngineResult, EngineWorkspace, flatten } from "../support/terraform-engine";
import { TEARDOWN_MS } from "../support/teardown";

const BUCKET = "crm-host-state";
const STACK = "CrmHostStack-dev";
const KEY = `${STACK}/terraform.tfstate`;
// The state is encrypted with this key (SSE-KMS), so the object's encryption headers show that the
// backend asked for it (a bucket's default encryption would only say AES256).
const KMS_KEY = "arn:aws:kms:us-east-1:123456789012:key/0b7f1c52-3d2e-4a43-9a0e-6c0f3b1f2d61";
// moto takes any credentials; these keep the AWS SDK away from real ones and from the metadata service.
const AWS_ENV = {
  AWS_ACCESS_KEY_ID: "moto-test",
  AWS_SECRET_ACCESS_KEY: "moto-test",
  AWS_SESSION_TOKEN: "",
  AWS_PROFILE: "",
  AWS_CONFIG_FILE: "/dev/null",
  AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
  AWS_EC2_METADATA_DISABLED: "true",
};

/** The test stack's Terraform JSON; `holdLockSeconds` adds a resource whose creation keeps the apply (and its lock) busy. */
function configuration(holdLockSeconds = 0): any {
  const stack = new TerraformStack(Testing.app(), STACK);
  stack.addOverride("terraform.required_version", MINIMUM_TERRAFORM_VERSION);
  new StateBackend(stack, "state", {
    settings: { type: "s3", bucket: BUCKET, kmsKeyId: KMS_KEY },
    defaultRegion: "us-east-1",
  });
  bootstrapCheck(stack, { readFromParameterStore: false });
  const json = JSON.parse(Testing.synth(stack));
  if (holdLockSeconds > 0) {
    json.resource.terraform_data.hold_lock = {
      provisioner: [{ "local-exec": { command: `sleep ${holdLockSeconds}` } }],
    };
  }
  return json;
}

const motoServer = findMotoServer();

describeWithEngine(
  "S3 state backend with S3-native locking, against moto on loopback",
  (engine) => {
    let moto: MotoServer;
    const workspaces: EngineWorkspace[] = [];

    /** A workspace initialized against moto: the stack's backend block plus the endpoint settings of the test. */
    async function initialized(json: object): Promise<EngineWorkspace> {
      const workspace = new EngineWorkspace(engine, json);
      workspaces.push(workspace);
      writeFileSync(
        join(workspace.dir, "moto.s3.tfbackend"),
        [
          `endpoints = { s3 = "${moto.endpoint}" }`,
          "use_path_style = true",
          "skip_credentials_validation = true",
          "skip_requesting_account_id = true",
          "skip_metadata_api_check = true",
          "skip_region_validation = true",
          "",
        ].join("\n"),
      );
      const result = await workspace.run(
        ["init", "-input=false", "-no-color", "-backend-config=moto.s3.tfbackend"],
        AWS_ENV,
      );
      if (result.code !== 0)
        throw new Error(`terraform init failed:\n${result.stdout}\n${result.stderr}\n${moto.output()}`);
      return workspace;
    }

    const apply = (workspace: EngineWorkspace, extra: string[] = []): Promise<EngineResult> =>
      workspace.run(
        ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "bootstrap_version=6", ...extra],
        AWS_ENV,
      );

    beforeAll(async () => {
      moto = await MotoServer.start(motoServer!);
      const created = await moto.http("PUT", `/${BUCKET}`);
      expect(created.status).toBe(200);
    }, 60_000);
    afterAll(async () => {
      await moto?.stop();
      for (const workspace of workspaces) workspace.remove();
    }, TEARDOWN_MS);

    it("applies, keeps the state encrypted in the bucket, and refuses a concurrent apply through the lock", async () => {
      const first = await initialized(configuration(8));
      const second = await initialized(configuration(8));

      const running = apply(first);
      // Wait (bounded) until the first apply holds the lock: S3's lock file next to the state.
      const deadline = Date.now() + 30_000;
      while ((await moto.http("HEAD", `/${BUCKET}/${KEY}.tflock`)).status !== 200) {
        if (Date.now() > deadline) throw new Error(`no lock file within 30 s:\n${moto.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const refused = await apply(second, ["-lock-timeout=1s"]);
      const done = await running;

      expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: "" });
      expect(done.stdout).toMatch(/Apply complete! Resources: 2 added/);
      expect(refused.code).not.toBe(0);
      expect(flatten(refused.stderr)).toContain("Error acquiring the state lock");
      expect(refused.stdout).not.toMatch(/Apply complete/);

      // The lock is gone, the state is in the bucket under the stack's key, encrypted at rest.
      expect((await moto.http("HEAD", `/${BUCKET}/${KEY}.tflock`)).status).toBe(404);
      const head = await moto.http("HEAD", `/${BUCKET}/${KEY}`);
      expect(head.status).toBe(200);
      expect(head.headers["x-amz-server-side-encryption"]).toBe("aws:kms");
      expect(head.headers["x-amz-server-side-encryption-aws-kms-key-id"]).toBe(KMS_KEY);
      const state = JSON.parse((await moto.http("GET", `/${BUCKET}/${KEY}`)).body);
      expect(state.resources.map((resource: any) => `${resource.type}.${resource.name}`).sort()).toEqual(
        expect.arrayContaining(["terraform_data.hold_lock"]),
      );
      expect(state.resources).toHaveLength(2);
    }, 120_000);

    it("finds the state again after terraform init in a clean directory", async () => {
      const fresh = await initialized(configuration(8));
      const list = await fresh.run(["state", "list", "-no-color"], AWS_ENV);
      expect(list.code).toBe(0);
      expect(list.stdout.split("\n").filter(Boolean)).toContain("terraform_data.hold_lock");
      const plan = await fresh.run(
        ["plan", "-input=false", "-no-color", "-detailed-exitcode", "-var", "bootstrap_version=6"],
        AWS_ENV,
      );
      expect({ code: plan.code, stderr: plan.stderr }).toEqual({ code: 0, stderr: "" });
      expect(plan.stdout).toContain("No changes.");
    }, 120_000);
  },
  motoServer ? [] : ["moto_server (PyPI moto[server])"],
);
