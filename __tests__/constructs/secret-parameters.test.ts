import {
  parameterArn,
  SECRET_PARAMETER_TAG,
  SecretParameters,
  secretParameterNames,
} from "../../constructs/secret-parameters";
import { only, synthesize } from "../support/synth";

describe("SecretParameters", () => {
  const { json } = synthesize((scope) => {
    const parameters = new SecretParameters(scope, "secret_parameters", {
      stackName: "CrmHost-prod",
      region: "us-gov-west-1",
    });
    expect(parameters.names).toEqual({
      region: "us-gov-west-1",
      dbRootPassword: "/CrmHost-prod/crm/db-root-password",
      appDbPassword: "/CrmHost-prod/crm/app-db-password",
      sourceHostToken: "/CrmHost-prod/crm/source-host-token",
    });
  });
  const account = "${data.aws_caller_identity.crm_secrets.account_id}";
  const arns = Object.values(secretParameterNames("CrmHost-prod")).map(
    (name) => `arn:aws-us-gov:ssm:us-gov-west-1:${account}:parameter${name}`,
  );

  it("names one path per stack, and their ARNs in the region's partition and the deploying account", () => {
    expect(Object.values(secretParameterNames("CrmHost-prod"))).toEqual([
      "/CrmHost-prod/crm/db-root-password",
      "/CrmHost-prod/crm/app-db-password",
      "/CrmHost-prod/crm/source-host-token",
    ]);
    expect(parameterArn("eu-west-1", "123456789012", "/S/crm/x")).toBe(
      "arn:aws:ssm:eu-west-1:123456789012:parameter/S/crm/x",
    );
    expect(Object.values(json.locals?.crm_secrets_parameters as Record<string, string>)).toEqual(
      expect.arrayContaining(arns),
    );
  });

  it("asks the tagging API for those ARNs only: names and tags, never a value (no aws_ssm_parameter data source)", () => {
    expect(only(json.data, "aws_resourcegroupstaggingapi_resources")).toMatchObject({ resource_arn_list: arns });
    expect(Object.keys(json.data ?? {}).sort()).toEqual([
      "aws_caller_identity",
      "aws_resourcegroupstaggingapi_resources",
    ]);
    expect(json.locals?.crm_secrets_listed).toBe(
      "${data.aws_resourcegroupstaggingapi_resources.crm_secrets.resource_tag_mapping_list[*].resource_arn}",
    );
  });

  it("fails the plan naming the missing parameters, and says how to put them (the engine test plans it)", () => {
    const check = json.resource?.terraform_data?.secrets as {
      lifecycle: { precondition: { error_message: string }[] };
    };
    expect(check.lifecycle.precondition).toEqual([
      {
        condition: "${length(local.crm_secrets_missing) == 0}",
        error_message: expect.stringMatching(
          /^Parameter Store \(us-gov-west-1\) has no \$\{join\(", ", local\.crm_secrets_missing\)\}: put the secrets with "npm run secrets -- CrmHost-prod set"/,
        ),
      },
    ]);
    expect(check.lifecycle.precondition[0].error_message).toContain(SECRET_PARAMETER_TAG);
  });

  it("leaves out the database root password for the scale-out topology, whose master password RDS keeps", () => {
    let names: Record<string, string> = {};
    const { json: scaleOut } = synthesize((scope) => {
      names = {
        ...new SecretParameters(scope, "secret_parameters", {
          stackName: "S",
          region: "us-east-1",
          rootPassword: false,
        }).names,
      };
    });
    expect(names).toEqual({
      region: "us-east-1",
      appDbPassword: "/S/crm/app-db-password",
      sourceHostToken: "/S/crm/source-host-token",
    });
    expect(JSON.stringify(scaleOut.locals?.crm_secrets_parameters)).not.toContain("db-root-password");
  });
});
