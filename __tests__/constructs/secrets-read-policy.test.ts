import { SecretsReadPolicy } from "../../constructs/secrets-read-policy";
import { only, synthesize } from "../support/synth";

const ARNS = [
  "arn:aws:ssm:eu-west-1:123456789012:parameter/S/crm/db-root-password",
  "arn:aws:ssm:eu-west-1:123456789012:parameter/S/crm/app-db-password",
];

describe("SecretsReadPolicy", () => {
  const { json } = synthesize(
    (scope) =>
      new SecretsReadPolicy(scope, "secrets_policy", {
        roleName: "crm-host-role",
        parameterArns: ARNS,
        kmsKeyId: "alias/crm-secrets",
        region: "eu-west-1",
      }),
  );

  it("is one inline policy of the role, its document read from the policy document", () => {
    expect(json.resource?.aws_iam_role_policy?.crm_secrets).toMatchObject({
      name: "read-crm-secrets",
      role: "crm-host-role",
      policy: "${data.aws_iam_policy_document.crm_secrets.json}",
    });
    expect(Object.keys(json.resource ?? {})).toEqual(["aws_iam_role_policy"]);
  });

  it("allows exactly ssm:GetParameters on the parameters and kms:Decrypt with their key through Parameter Store only", () => {
    const document = only(json.data, "aws_iam_policy_document");
    expect(document.version).toBe("2012-10-17");
    expect(document.statement.map(({ sid: _sid, ...statement }: Record<string, unknown>) => statement)).toEqual([
      { effect: "Allow", actions: ["ssm:GetParameters"], resources: ARNS },
      {
        effect: "Allow",
        actions: ["kms:Decrypt"],
        resources: ["${data.aws_kms_key.crm_secrets.arn}"],
        condition: [{ test: "StringEquals", variable: "kms:ViaService", values: ["ssm.eu-west-1.amazonaws.com"] }],
      },
    ]);
    expect(only(json.data, "aws_kms_key")).toMatchObject({ key_id: "alias/crm-secrets" });
  });

  it("names Parameter Store by the region's partition (China's endpoints end in amazonaws.com.cn)", () => {
    const china = synthesize(
      (scope) =>
        new SecretsReadPolicy(scope, "secrets_policy", {
          roleName: "r",
          parameterArns: ARNS,
          kmsKeyId: "alias/aws/ssm",
          region: "cn-north-1",
        }),
    ).json;
    expect(only(china.data, "aws_iam_policy_document").statement[1].condition[0].values).toEqual([
      "ssm.cn-north-1.amazonaws.com.cn",
    ]);
  });
});
