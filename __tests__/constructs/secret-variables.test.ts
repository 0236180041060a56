import { SecretVariables } from "../../constructs/secret-variables";
import { only, synthesize } from "../support/synth";

describe("SecretVariables", () => {
  const names = ["db_root_password", "app_db_password", "source_host_token"];

  it("declares the three secrets as sensitive variables with no default", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    for (const name of names) {
      const variable = json.variable?.[name];
      expect(variable).toMatchObject({ type: "string", sensitive: true, nullable: false });
      expect(variable.default).toBeUndefined();
      // A validation block would print a rejected value in Terraform's diagnostic: see the preconditions.
      expect(variable.validation).toBeUndefined();
    }
  });

  it("refuses control characters and empty or overlong values in preconditions that print no value", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    expect(only(json.resource, "terraform_data").lifecycle.precondition).toEqual(names.map((name) => ({
      condition: `\${can(regex("^[^[:cntrl:]]{1,256}$", var.${name}))}`,
      error_message: `Invalid value for variable "${name}": expected 1 to 256 printable characters, with no control characters such as newlines or tabs.`,
    })));
  });

  it("hands the script each secret as a base64 expression and honours maxLength", () => {
    let secrets: SecretVariables | undefined;
    const { json } = synthesize((scope) => { secrets = new SecretVariables(scope, "secrets", { maxLength: 64 }); });
    expect(only(json.resource, "terraform_data").lifecycle.precondition[1].condition).toContain("var.app_db_password))}");
    expect(only(json.resource, "terraform_data").lifecycle.precondition[1].condition).toContain("{1,64}");
    expect(secrets!.scriptSecrets.dbRootPasswordBase64).toMatch(/TfToken/);
  });
});
