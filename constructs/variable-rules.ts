/**
 * Terraform `validation` rules for the stack's input variables. Each rule pairs a condition
 * over the variable with a message that names the variable and says what is expected, so a
 * bad `--var`/`TF_VAR_` value stops `terraform plan` before anything reaches AWS.
 */
import { Fn, TerraformStack, TerraformVariable, TerraformVariableConfig, TerraformVariableValidationConfig } from "cdktf";
import { Construct } from "constructs";

/**
 * Declares a variable at the root of the stack, so its Terraform name is exactly `name`
 * (what users pass to `--var name=…` or `TF_VAR_name`) whichever construct declares it.
 */
export function stackVariable(scope: Construct, name: string, config: TerraformVariableConfig): TerraformVariable {
  return new TerraformVariable(TerraformStack.of(scope), name, config);
}

function invalid(variable: TerraformVariable, expected: string): string {
  return `Invalid value for variable "${variable.friendlyUniqueId}": expected ${expected}.`;
}

/** The variable's whole string value matches the RE2 `pattern` (anchor it with ^ and $). */
export function matchesPattern(
  variable: TerraformVariable,
  pattern: string,
  expected: string,
): TerraformVariableValidationConfig {
  // cdktf copies function arguments into the HCL expression without escaping backslashes,
  // which HCL would then misread: keep patterns free of them (e.g. put "-" last in a class).
  if (pattern.includes("\\")) throw new Error(`Validation pattern ${pattern} must not contain a backslash.`);
  return {
    condition: Fn.can(Fn.regex(pattern, variable.stringValue)),
    errorMessage: invalid(variable, expected),
  };
}

/** A list(string) variable holds at least one element, and each is an IPv4 CIDR block. */
export function ipv4CidrList(variable: TerraformVariable): TerraformVariableValidationConfig {
  const name = `var.${variable.friendlyUniqueId}`;
  return {
    // cidrhost() fails on anything that is not a CIDR block; the regex keeps IPv6 blocks out of IPv4 rules.
    condition: `\${length(${name}) > 0 && alltrue([for cidr in ${name} : can(cidrhost(cidr, 0)) && can(regex("^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+/[0-9]+$", cidr))])}`,
    errorMessage: invalid(variable, 'a non-empty list of IPv4 CIDR blocks such as ["203.0.113.0/24"]'),
  };
}

/** The variable holds 1 to `max` characters, none of them a control character (newline, tab, …). */
export function printableText(variable: TerraformVariable, max: number): TerraformVariableValidationConfig {
  return matchesPattern(
    variable,
    `^[^[:cntrl:]]{1,${max}}$`,
    `1 to ${max} printable characters, with no control characters such as newlines or tabs`,
  );
}

/** The number variable holds a whole number from `min` to `max` (inclusive), in `unit`. */
export function wholeNumberBetween(
  variable: TerraformVariable,
  min: number,
  max: number,
  unit: string,
): TerraformVariableValidationConfig {
  const name = `var.${variable.friendlyUniqueId}`;
  return {
    condition: `\${${name} == floor(${name}) && ${name} >= ${min} && ${name} <= ${max}}`,
    errorMessage: invalid(variable, `a whole number of ${unit} from ${min} to ${max}`),
  };
}
