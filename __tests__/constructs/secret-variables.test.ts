import { SecretVariables } from "../../constructs/secret-variables";
import { synthesize } from "../support/synth";

describe("SecretVariables", () => {
  it("declares the three secrets as sensitive variables with no default, refusing control characters", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    for (const name of ["db_root_password", "app_db_password", "source_host_token"]) {
      const variable = json.variable?.[name];
      expect(variable).toMatchObject({ type: "string", sensitive: true, nullable: false });
      expect(variable.default).toBeUndefined();
      expect(variable.validation).toEqual([{
        condition: `\${can(regex("^[^[:cntrl:]]{1,256}$", var.${name}))}`,
        error_message: `Invalid value for variable "${name}": expected 1 to 256 printable characters, with no control characters such as newlines or tabs.`,
      }]);
    }
  });

  it("hands the script each secret as a base64 expression and honours maxLength", () => {
    let secrets: SecretVariables | undefined;
    const { json } = synthesize((scope) => { secrets = new SecretVariables(scope, "secrets", { maxLength: 64 }); });
    expect(json.variable?.app_db_password.validation[0].condition).toContain("{1,64}");
    expect(secrets!.scriptSecrets.dbRootPasswordBase64).toMatch(/TfToken/);
  });
});
