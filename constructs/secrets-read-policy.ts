import { DataAwsIamPolicyDocument } from "@cdktf/provider-aws/lib/data-aws-iam-policy-document";
import { DataAwsKmsKey } from "@cdktf/provider-aws/lib/data-aws-kms-key";
import { IamRolePolicy } from "@cdktf/provider-aws/lib/iam-role-policy";
import { partition } from "@aws-sdk/util-endpoints";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { POLICY_VERSION } from "./constants";

/** The condition that KMS is asked by `service` (ssm, secretsmanager) of the region on the caller's behalf. */
function viaService(service: string, region: string): { test: string; variable: string; values: string[] } {
  return {
    test: "StringEquals",
    variable: "kms:ViaService",
    values: [`${service}.${region}.${partition(region).dnsSuffix}`],
  };
}

/** Props of {@link SecretsReadPolicy}. */
export interface SecretsReadPolicyProps {
  /** Name of the role that gets the policy (the instance role). */
  readonly roleName: string;
  /** ARNs of exactly the parameters the role may read. */
  readonly parameterArns: string[];
  /** KMS key that encrypts them: an alias (`alias/aws/ssm`, the AWS managed key), a key id or ARN, or an alias ARN. */
  readonly kmsKeyId: string;
  /** Region of the parameters and the key. */
  readonly region: string;
  /**
   * Terraform name of the key's data source, the policy document and the role policy (`<type>.<name>`).
   * @default "crm_secrets"
   */
  readonly name?: string;
}

/**
 * The one inline policy of the instance role in `parameter-store` mode, its only permissions:
 * `ssm:GetParameters` on exactly the secrets' parameters, and `kms:Decrypt` with their key, only
 * when Parameter Store asks KMS on the role's behalf (`kms:ViaService`). The key's ARN is looked up
 * from `kmsKeyId` (KMS creates the AWS managed key `aws/ssm` if it does not exist yet). Never the
 * scale-out topology's database master secret: the operator's `npm run ops -- <stack> db-setup` brings
 * it to one host for the one action that needs it (docs/scale-out.md).
 */
export class SecretsReadPolicy extends Construct {
  public readonly policy: IamRolePolicy;
  /** The policy document: the two statements. */
  public readonly document: DataAwsIamPolicyDocument;

  constructor(scope: Construct, id: string, props: SecretsReadPolicyProps) {
    super(scope, id);
    const name = props.name ?? "crm_secrets";
    const key = new DataAwsKmsKey(this, "key", { keyId: props.kmsKeyId });
    nameElements(name, key);
    this.document = new DataAwsIamPolicyDocument(this, "document", {
      version: POLICY_VERSION,
      statement: [
        {
          sid: "ReadTheSecretsParameters",
          effect: "Allow",
          actions: ["ssm:GetParameters"],
          resources: props.parameterArns,
        },
        {
          sid: "DecryptThemThroughParameterStoreOnly",
          effect: "Allow",
          actions: ["kms:Decrypt"],
          resources: [key.arn],
          condition: [viaService("ssm", props.region)],
        },
      ],
    });
    nameElements(name, this.document);
    this.policy = new IamRolePolicy(this, "policy", {
      name: "read-crm-secrets",
      role: props.roleName,
      policy: this.document.json,
    });
    nameElements(name, this.policy);
  }
}
