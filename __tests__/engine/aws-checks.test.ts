/**
 * Variables judged at plan as AWS will judge them at apply, on a real engine with the stack's own
 * checks (provider-free: the preconditions of terraform_data.ssh_public_key, the CIDR lists'
 * validations, and the security group's rule quota carried by a stand-in): an SSH public key parsed
 * (type, base64, the length its type implies, the type inside the blob), a private key pasted by
 * mistake refused without a character of it in the output, CIDR blocks given twice, and more inbound
 * rules than the quota. Each refusal prints one message naming the variable.
 */
import { spawnSync } from "child_process";
import { Testing } from "cdktf";
import { mkdtempSync, readFileSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { CrmHostStack } from "../../main";
import { reportMissingTools } from "../support/required-tools";
import { keyLine, newKey, rsaBlob, wireString } from "../support/ssh-keys";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineResult, EngineWorkspace, flatten } from "../support/terraform-engine";

const ED25519 = newKey("ed25519");
const KEY_REFUSED = 'Invalid value for variable "ssh_public_key": expected ';

/** The one message of a failed plan, and the check that printed it. */
function failures(result: EngineResult): string[] {
  return flatten(result.stderr)
    .split(/Error: /)
    .slice(1);
}

describeWithEngine("SSH key, CIDR lists and rule quota, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    const stack = new CrmHostStack(Testing.app(), exampleStackSettings());
    const { variable, resource } = JSON.parse(Testing.synth(stack));
    const names = ["ssh_public_key", "ssh_ingress_cidrs", "app_ingress_cidrs", "inbound_rule_quota"];
    workspace = new EngineWorkspace(engine, {
      variable: Object.fromEntries(names.map((name) => [name, variable[name]])),
      resource: {
        terraform_data: {
          ssh_public_key: resource.terraform_data.ssh_public_key,
          // The key pair takes the key: a plan must not show it either.
          aws_key_pair_crm_host: { input: "${var.ssh_public_key}" },
          // The security group's own precondition, on a stand-in of the same name.
          aws_security_group_crm_host: {
            input: "security group",
            lifecycle: resource.aws_security_group.crm_host.lifecycle,
          },
        },
      },
    });
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  const plan = (variables: Record<string, string | string[]>) =>
    workspace.plan({ ssh_public_key: ED25519.line, ...variables });

  describe("the SSH public key", () => {
    it.each([
      ["ED25519", ED25519.line],
      ["ED25519 without a comment", newKey("ed25519", 0, "").line],
      ["RSA of 1024 bits", newKey("rsa", 1024).line],
      ["RSA of 2048 bits", newKey("rsa", 2048).line],
      ["RSA of 4096 bits, a comment with spaces", newKey("rsa", 4096, "admin at work laptop").line],
      [
        "RSA of 3072 bits whose modulus has its top bit clear",
        keyLine("ssh-rsa", rsaBlob(Buffer.from([1, 0, 1]), Buffer.alloc(384, 0x41))),
      ],
    ])(
      "accepts %s",
      async (_what, key) => {
        const result = await plan({ ssh_public_key: key });
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
        // Sensitive: the plan shows the key pair's key as such, not the key.
        expect(result.stdout).toContain("(sensitive value)");
        expect(result.stdout).not.toContain(key.split(" ")[1].slice(0, 40));
      },
      60_000,
    );

    const ed25519Body = ED25519.line.split(" ")[1];
    const rsa = newKey("rsa", 2048);
    it.each([
      [
        "an ECDSA key (EC2 imports RSA and ED25519)",
        newKey("ecdsa").line,
        "an OpenSSH public key line of a type EC2 imports",
      ],
      ["a DSA key line", `ssh-dss ${ed25519Body}`, "an OpenSSH public key line of a type EC2 imports"],
      ["a line with a Windows line end", `${ED25519.line}\r`, "an OpenSSH public key line"],
      ["two lines", `${ED25519.line}\n${ED25519.line}`, "an OpenSSH public key line"],
      [
        "base64 without its padding",
        `ssh-ed25519 ${Buffer.concat([ED25519.blob, Buffer.from([1])])
          .toString("base64")
          .replace(/=+$/, "")}`,
        "the key's base64 as ssh-keygen writes it",
      ],
      [
        "base64 with a character cut",
        `ssh-ed25519 ${ed25519Body.slice(0, -1)}`,
        "the key's base64 as ssh-keygen writes it",
      ],
      [
        "an ED25519 blob under the ssh-rsa label",
        `ssh-rsa ${ed25519Body}`,
        "a key whose data names the type of its line",
      ],
      [
        "an RSA blob under the ssh-ed25519 label",
        `ssh-ed25519 ${rsa.line.split(" ")[1]}`,
        "a key whose data names the type of its line",
      ],
      [
        "an ED25519 key cut short",
        keyLine("ssh-ed25519", ED25519.blob.subarray(0, 48)),
        "a key of the length its type implies",
      ],
      [
        "an ED25519 key with bytes added",
        keyLine("ssh-ed25519", Buffer.concat([ED25519.blob, Buffer.alloc(3)])),
        "a key of the length its type implies",
      ],
      ["an RSA key of 512 bits", newKey("rsa", 512).line, "a key of the length its type implies"],
      [
        "an RSA key of 8192 bits (EC2 imports up to 4096)",
        keyLine("ssh-rsa", rsaBlob(Buffer.from([1, 0, 1]), Buffer.alloc(1024, 0xc1))),
        "a key of the length its type implies",
      ],
      [
        "an RSA key whose lengths do not add up",
        keyLine("ssh-rsa", Buffer.concat([rsa.blob, wireString("extra")])),
        "a key of the length its type implies",
      ],
    ])(
      "refuses %s with one message, never printing the key",
      async (_what, key, expected) => {
        const result = await plan({ ssh_public_key: key });
        expect(result.code).not.toBe(0);
        const errors = failures(result);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toContain(`${KEY_REFUSED}${expected}`);
        expect(result.stdout + result.stderr).not.toContain(key.split(" ")[1]?.slice(0, 30) ?? key);
      },
      60_000,
    );
  });

  describe("a private key pasted instead of the public one", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "crm-key-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** Private keys as people have them: PKCS#8 (openssl), and OpenSSH's own form, whole or its body only. */
    function privateKeys(): [string, string][] {
      const keys: [string, string][] = [
        ["a PKCS#8 ED25519 key", newKey("ed25519").privatePem.trim()],
        ["a PKCS#8 RSA key", newKey("rsa", 2048).privatePem.trim()],
      ];
      const made = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "", "-f", join(dir, "id")], {
        encoding: "utf8",
        timeout: 30_000,
      });
      if (made.status === 0) {
        const openssh = readFileSync(join(dir, "id"), "utf8").trim();
        keys.push(
          ["an OpenSSH key", openssh],
          ["the body of an OpenSSH key, without its first line", openssh.split("\n").slice(1, -1).join("\n")],
        );
      } else {
        reportMissingTools("the OpenSSH private keys of this test", ["ssh-keygen"]);
      }
      return keys;
    }

    it("is refused with one message that names it, and no piece of the key reaches the output", async () => {
      for (const [what, key] of privateKeys()) {
        const result = await plan({ ssh_public_key: key });
        expect({ what, code: result.code }).toEqual({ what, code: 1 });
        const errors = failures(result);
        expect({ what, errors: errors.length }).toEqual({ what, errors: 1 });
        expect(errors[0]).toContain(
          `${KEY_REFUSED}the public key, the one line of the .pub file: this value is a private key, which is not shown here`,
        );
        // Every piece of the key but those every such key shares, which the check's own text holds (b3BlbnNzaC1rZXktdjE…).
        const configuration = readFileSync(join(workspace.dir, "main.tf.json"), "utf8");
        const pieces = key
          .split("\n")
          .filter((line) => !line.startsWith("-----"))
          .flatMap((line) => line.match(/.{1,12}/g) ?? []);
        for (const piece of pieces.filter((part) => part.length === 12 && !configuration.includes(part))) {
          expect({ what, piece, shown: (result.stdout + result.stderr).includes(piece) }).toEqual({
            what,
            piece,
            shown: false,
          });
        }
      }
    }, 120_000);
  });

  describe("CIDR lists", () => {
    it.each([
      ["ssh_ingress_cidrs", ["203.0.113.0/24", "203.0.113.0/24"]],
      ["app_ingress_cidrs", ["10.0.0.0/8", "198.51.100.0/24", "10.0.0.0/08"]],
    ])(
      "refuse %s = %j: a block twice after normalization",
      async (name, cidrs) => {
        const result = await plan({ [name]: cidrs });
        expect(result.code).not.toBe(0);
        expect(flatten(result.stderr)).toContain(
          `Invalid value for variable "${name}": expected each CIDR block once ` +
            "(10.0.0.0/8 and 10.0.0.0/08 are one block): AWS refuses a rule given twice.",
        );
      },
      60_000,
    );

    it("accept overlapping blocks that are not the same block", async () => {
      const result = await plan({ ssh_ingress_cidrs: ["10.0.0.0/8", "10.0.0.0/16", "10.0.0.0/24"] });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    }, 60_000);
  });

  describe("the security group's rule quota", () => {
    const blocks = (count: number, third = 0) =>
      Array.from({ length: count }, (_, index) => `10.${third}.${index}.0/24`);

    it("plans up to the quota: 60 rules by default (one per block on 22, two per block on 80 and 3000)", async () => {
      const result = await plan({ ssh_ingress_cidrs: blocks(20), app_ingress_cidrs: blocks(20, 1) });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    }, 60_000);

    it("refuses one rule more, naming the lists, the count, the quota and where it is set", async () => {
      const result = await plan({ ssh_ingress_cidrs: blocks(21), app_ingress_cidrs: blocks(20, 1) });
      expect(result.code).not.toBe(0);
      const errors = failures(result);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(
        'Invalid value for variable "ssh_ingress_cidrs" or "app_ingress_cidrs": expected at most 60 inbound rules, ' +
          'AWS\'s quota "Inbound or outbound rules per security group" (variable inbound_rule_quota: 60 by default, 1,000 at most in any ' +
          "account; raise it in Service Quotas first); the lists make 61, one per CIDR block and port (22: 21, 3000: 20, 80: 20).",
      );
    }, 60_000);

    it("follows a raised quota, up to 1,000, and refuses one beyond any account's", async () => {
      const raised = await plan({
        ssh_ingress_cidrs: blocks(21),
        app_ingress_cidrs: blocks(20, 1),
        inbound_rule_quota: "61",
      });
      expect({ code: raised.code, stderr: raised.stderr }).toEqual({ code: 0, stderr: "" });
      for (const quota of ["1001", "0", "60.5"]) {
        const refused = await plan({ inbound_rule_quota: quota });
        expect(refused.code).not.toBe(0);
        expect(flatten(refused.stderr)).toContain(
          'Invalid value for variable "inbound_rule_quota": expected a whole number of inbound rules per ' +
            "security group from 1 to 1000.",
        );
      }
    }, 120_000);
  });
});
