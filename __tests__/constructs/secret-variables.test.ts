import { SecretVariables } from "../../constructs/secret-variables";
import { only, synthesize } from "../support/synth";

describe("SecretVariables", () => {
  const names = ["db_root_password", "app_db_password", "source_host_token"];

  it("declares the three secrets as sensitive variables with no default", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    for (const name of names) {
      const variable = json.variable?.[name];
      expect(variable).toMatchObject({ type: "string", sensitive: true, nullable: false });
      expect(variable?.default).toBeUndefined();
      // A validation block would print a rejected value in Terraform's diagnostic: see the preconditions.
      expect(variable?.validation).toBeUndefined();
    }
  });

  it("refuses Unicode controls, format characters, separators, invalid UTF-8, empty and overlong values in preconditions", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    const preconditions = only(json.resource, "terraform_data").lifecycle.precondition;
    expect(preconditions.slice(0, 3)).toEqual(
      names.map((name) => ({
        // Written as HCL (backslashes doubled), so RE2 gets \p{Cc}: [[:cntrl:]] is ASCII-only.
        condition: `\${can(regex("^[^\\\\p{Cc}\\\\p{Cf}\\\\p{Zl}\\\\p{Zp}\\\\x{FFFD}]{1,256}$", var.${name}))}`,
        error_message:
          `Invalid value for variable "${name}": expected 1 to 256 characters, with no control, format or ` +
          "line/paragraph separator characters (such as a newline, tab, U+0085, U+200B, U+2028, U+2029) and valid UTF-8.",
      })),
    );
  });

  it("refuses an app password that the app's .env cannot carry for dotenv, in a fourth precondition", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    const preconditions = only(json.resource, "terraform_data").lifecycle.precondition;
    expect(preconditions).toHaveLength(4);
    expect(preconditions[3].condition).toMatch(/^\$\{\(\(!endswith\(var\.app_db_password, /);
    expect(preconditions[3].condition).not.toMatch(/db_root_password|source_host_token/);
    expect(preconditions[3].error_message).toMatch(
      /^Invalid value for variable "app_db_password": expected a value the app's .env file can carry for the dotenv parser/,
    );
  });

  it("advises TF_VAR_ in the descriptions", () => {
    const { json } = synthesize((scope) => new SecretVariables(scope, "secrets"));
    for (const name of names) {
      expect(json.variable?.[name].description).toContain(
        `Give it as TF_VAR_${name}: Terraform prints a malformed *.tfvars line back`,
      );
    }
  });

  it("hands the script each secret as a base64 expression and honours maxLength", () => {
    let secrets: SecretVariables | undefined;
    const { json } = synthesize((scope) => {
      secrets = new SecretVariables(scope, "secrets", { maxLength: 64 });
    });
    expect(only(json.resource, "terraform_data").lifecycle.precondition[1].condition).toContain(
      "var.app_db_password))}",
    );
    expect(only(json.resource, "terraform_data").lifecycle.precondition[1].condition).toContain("{1,64}");
    expect(secrets!.scriptSecrets.dbRootPasswordBase64).toMatch(/TfToken/);
  });
});
