import { KeyPair } from "@cdktf/provider-aws/lib/key-pair";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/** Props of {@link SshKeyPair}. */
export interface SshKeyPairProps {
  /** KeyName (`<key_pair_name>`). */
  readonly keyName: string;
  /**
   * Public key material in OpenSSH format. CloudFormation generated the pair; Terraform takes
   * the public half from you so that no private key is ever generated or kept in Terraform state.
   */
  readonly publicKey: string;
  /**
   * Tags of the key pair.
   * @default - none
   */
  readonly tags?: Record<string, string>;
  /**
   * Terraform name of the key pair (`aws_key_pair.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_host"
   */
  readonly name?: string;
}

/** The SSH key pair of docs/original-stack.md §2.1, imported from public key material. */
export class SshKeyPair extends Construct {
  public readonly keyPair: KeyPair;

  constructor(scope: Construct, id: string, props: SshKeyPairProps) {
    super(scope, id);
    this.keyPair = new KeyPair(this, "key", { keyName: props.keyName, publicKey: props.publicKey, tags: props.tags });
    nameElements(props.name ?? "crm_host", this.keyPair);
  }

  /** The key pair's name, for the instance's `key_name`. */
  public get keyName(): string {
    return this.keyPair.keyName;
  }
}
