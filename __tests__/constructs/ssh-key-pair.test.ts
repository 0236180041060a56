import { KeyPair } from "@cdktf/provider-aws/lib/key-pair";
import { SshKeyPair } from "../../constructs/ssh-key-pair";
import { only, synthesize } from "../support/synth";

describe("SshKeyPair", () => {
  const publicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv8Z8m7rQ2u4x3nW1Yq0f0S0tqk8r3dJt7Jx9yZl0aB admin@example";

  it("imports the given public key under the given name and never asks Terraform for a private key", () => {
    const { text, json } = synthesize((scope) => new SshKeyPair(scope, "key", { keyName: "crm-admin", publicKey }));
    expect(text).toHaveResourceWithProperties(KeyPair, { key_name: "crm-admin", public_key: publicKey });
    expect(json.resource?.tls_private_key).toBeUndefined();
    expect(Object.keys(only(json.resource, "aws_key_pair")).sort()).toEqual(["key_name", "public_key"]);
  });
});
