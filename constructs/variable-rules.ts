/**
 * Terraform `validation` rules for the stack's input variables. Each rule pairs a condition
 * over the variable with a message that names the variable and says what is expected, so a
 * bad `--var`/`TF_VAR_` value stops `terraform plan` before anything reaches AWS.
 *
 * Conditions are written as HCL text (not through cdktf's `Fn`): cdktf copies function arguments
 * into the expression without escaping backslashes, and the Unicode classes below need them.
 */
import {
  TerraformStack,
  TerraformVariable,
  TerraformVariableConfig,
  TerraformVariableValidationConfig,
  Token,
} from "cdktf";
import { Construct } from "constructs";

/**
 * Declares a variable at the root of the stack, so its Terraform name is exactly `name`
 * (what users pass to `--var name=…` or `TF_VAR_name`) whichever construct declares it: a variables
 * construct (`*-variables.ts`), the one kind that does (`__tests__/stack.test.ts`).
 */
export function stackVariable(scope: Construct, name: string, config: TerraformVariableConfig): TerraformVariable {
  return new TerraformVariable(TerraformStack.of(scope), name, config);
}

function invalid(variable: TerraformVariable, expected: string): string {
  return `Invalid value for variable "${variable.friendlyUniqueId}": expected ${expected}.`;
}

/** `value` as an HCL quoted string (JSON's escapes are valid HCL escapes). */
export function hclString(value: string): string {
  // A template sequence would be evaluated by Terraform, not matched literally.
  if (/[$%]\{/.test(value)) throw new Error(`${value} must not hold a template sequence ($\{ or %{).`);
  return JSON.stringify(value);
}

/** HCL reference of a variable, e.g. `var.vpc_id`. */
export function variableReference(variable: TerraformVariable): string {
  return `var.${variable.friendlyUniqueId}`;
}

/**
 * RE2 class body of the characters no text variable may hold: Unicode control characters (Cc:
 * the ASCII ones, DEL and U+0080–U+009F such as U+0085 NEXT LINE), format characters (Cf: U+200B,
 * U+FEFF, bidirectional marks, …), the line and paragraph separators U+2028 and U+2029 (Zl, Zp),
 * and U+FFFD, which is what RE2 sees for every byte of invalid UTF-8 (possible through `TF_VAR_`).
 * RE2's `[[:cntrl:]]` is ASCII-only: it let U+0085 and U+2028 through.
 */
export const UNPRINTABLE_CLASS = "\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\x{FFFD}";

/** What {@link UNPRINTABLE_CLASS} refuses, in words, for messages and descriptions. */
export const UNPRINTABLE_WORDS =
  "no control, format or line/paragraph separator characters (such as a newline, tab, U+0085, U+200B, U+2028, U+2029) and valid UTF-8";

/** HCL condition: the string `expression` matches the RE2 `pattern` (anchor it with ^ and $). */
export function patternCondition(expression: string, pattern: string): string {
  return `can(regex(${hclString(pattern)}, ${expression}))`;
}

/** The variable's whole string value matches the RE2 `pattern` (anchor it with ^ and $). */
export function matchesPattern(
  variable: TerraformVariable,
  pattern: string,
  expected: string,
): TerraformVariableValidationConfig {
  return {
    condition: `\${${patternCondition(variableReference(variable), pattern)}}`,
    errorMessage: invalid(variable, expected),
  };
}

/**
 * A rule given as an HCL condition (without `${}`) that may read other variables too (Terraform >= 1.9),
 * with the message of every rule here: the variable's name and what is expected.
 */
export function conditionRule(
  variable: TerraformVariable,
  condition: string,
  expected: string,
): TerraformVariableValidationConfig {
  return { condition: `\${${condition}}`, errorMessage: invalid(variable, expected) };
}

/** The rule, or the variable left unset (null): for optional variables. */
export function unsetOr(
  variable: TerraformVariable,
  rule: TerraformVariableValidationConfig,
): TerraformVariableValidationConfig {
  return {
    condition: `\${${variableReference(variable)} == null || ${rule.condition.replace(/^\$\{([\s\S]*)\}$/, "$1")}}`,
    errorMessage: rule.errorMessage,
  };
}

/** HCL condition: the string `expression` is an IPv4 CIDR block written with its network address. */
export function ipv4NetworkCondition(expression: string): string {
  // cidrhost() fails on anything that is not a CIDR block and yields the network address: a block
  // such as 10.0.0.1/8 (which the AWS provider refuses at apply) or 010.0.0.0/8 differs from it.
  // try(): HCL's && does not short-circuit. The regex keeps IPv6 blocks out of IPv4 rules.
  return (
    `(can(regex("^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+/[0-9]+$", ${expression})) && ` +
    `try(cidrhost(${expression}, 0) == split("/", ${expression})[0], false))`
  );
}

/** A list(string) variable holds at least one element, and each is an IPv4 network in CIDR form. */
export function ipv4CidrList(variable: TerraformVariable): TerraformVariableValidationConfig {
  const name = variableReference(variable);
  return {
    condition: `\${length(${name}) > 0 && alltrue([for cidr in ${name} : ${ipv4NetworkCondition("cidr")}])}`,
    errorMessage: invalid(
      variable,
      'a non-empty list of IPv4 CIDR blocks written with their network address, such as ["203.0.113.0/24"] ' +
        "(10.0.0.0/8, not 10.0.0.1/8)",
    ),
  };
}

/** What {@link printableText} expects, in words. */
export function printableTextWords(max: number): string {
  return `1 to ${max} characters, with ${UNPRINTABLE_WORDS}`;
}

/** HCL condition: `expression` holds 1 to `max` characters, none of {@link UNPRINTABLE_CLASS}. */
export function printableTextCondition(expression: string, max: number): string {
  return patternCondition(expression, `^[^${UNPRINTABLE_CLASS}]{1,${max}}$`);
}

/** The variable holds 1 to `max` characters, none of them unprintable (see {@link UNPRINTABLE_CLASS}). */
export function printableText(variable: TerraformVariable, max: number): TerraformVariableValidationConfig {
  return {
    condition: `\${${printableTextCondition(variableReference(variable), max)}}`,
    errorMessage: invalid(variable, printableTextWords(max)),
  };
}

/**
 * What {@link dotenvValue} expects, in words. The provisioning script writes the value into the
 * app's `.env` in the first of these forms that the `dotenv` package reads back exactly.
 */
export const DOTENV_WORDS =
  "a value the app's .env file can carry for the dotenv parser: either it lacks one of the quote characters ' ` \" " +
  "(a double-quoted value must also not hold \\n or \\r, which dotenv turns into line breaks) and does not end with \\, " +
  "or it holds no # and neither starts nor ends with a space (of any kind), and if it starts with a quote, it does not " +
  'end with it and holds it again, not after a \\ (and no \\n or \\r after a leading ")';

/**
 * HCL condition: the string `expression` can be written on a `KEY=value` line of a `.env` file so
 * that `dotenv` (16 to 18, both its parsers) reads it back unchanged. The script's `dotenv_value`
 * tries the same forms in the same order: '…', `…`, "…", then unquoted.
 * - Quoted: the value lacks that quote character (dotenv has no escapes: `\'` keeps the backslash)
 *   and does not end with `\` (dotenv would take `\'` for an escaped quote and run on to a later
 *   line). In "…", dotenv also turns `\n` and `\r` into line breaks.
 * - Unquoted: dotenv cuts at `#`, trims spaces (after the rule of printableTextCondition, the ones
 *   left are Unicode's Zs), reads a leading quote as an opening one (harmless when an unescaped one
 *   follows inside the value: that match fails and dotenv reads the line bare), drops a leading and
 *   trailing pair of the same quote, and after a leading " turns \n and \r into line breaks.
 * Apply it with {@link printableTextCondition}: line breaks and U+2028/U+2029 are refused there.
 */
export function dotenvCondition(expression: string): string {
  const has = (text: string) => `strcontains(${expression}, ${hclString(text)})`;
  const quoted =
    `(!endswith(${expression}, "\\\\") && (!${has("'")} || !${has("`")} || ` +
    `(!${has('"')} && !${patternCondition(expression, "\\\\[nr]")})))`;
  // A leading quote opens a quoted value unless a later, unescaped one closes it mid-value (then dotenv
  // reads the line bare); and a value that also ends with it loses both.
  const leadingQuote = (q: string) => patternCondition(expression, `^${q}(|.*[^\\\\])${q}.*[^${q}]$`);
  const bare =
    `(!${has("#")} && ${patternCondition(expression, "^[^\\p{Zs}]")} && ` +
    `${patternCondition(expression, "[^\\p{Zs}]$")} && (${patternCondition(expression, "^[^'\"`]")} || ` +
    `${leadingQuote("'")} || ${leadingQuote("`")} || (${leadingQuote('"')} && !${patternCondition(expression, "\\\\[nr]")})))`;
  return `(${quoted} || ${bare})`;
}

/** {@link printableTextCondition} in TypeScript, for a value that never passes through Terraform (`npm run secrets`). */
export function isPrintableText(value: string, max: number): boolean {
  return new RegExp(`^[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\uFFFD]{1,${max}}$`, "u").test(value);
}

/**
 * {@link printableTextCondition} and {@link dotenvCondition} in TypeScript, for a value that never passes
 * through Terraform (`npm run secrets`, parameter-store mode): true when the app's password is 1 to `max`
 * printable characters that `.env` can carry for dotenv. The engine test of the HCL rule compares both.
 */
export function isPrintableDotenvValue(value: string, max: number): boolean {
  if (!isPrintableText(value, max)) return false;
  const quoted =
    !value.endsWith("\\") &&
    (!value.includes("'") || !value.includes("`") || (!value.includes('"') && !/\\[nr]/.test(value)));
  const leadingQuote = (q: string) => new RegExp(`^${q}(|.*[^\\\\])${q}.*[^${q}]$`, "su").test(value);
  const bare =
    !value.includes("#") &&
    /^[^\p{Zs}]/u.test(value) &&
    /[^\p{Zs}]$/u.test(value) &&
    (/^[^'"`]/.test(value) || leadingQuote("'") || leadingQuote("`") || (leadingQuote('"') && !/\\[nr]/.test(value)));
  return quoted || bare;
}

/** The variable's value can be written into `.env` and read back exactly by dotenv (see {@link dotenvCondition}). */
export function dotenvValue(variable: TerraformVariable): TerraformVariableValidationConfig {
  return {
    condition: `\${${dotenvCondition(variableReference(variable))}}`,
    errorMessage: invalid(variable, DOTENV_WORDS),
  };
}

/**
 * Refuses at synthesis a literal `value` that `accepted` refuses: a construct's prop that takes a variable's value
 * (a token, which the variable's validation checks at plan) or a literal gets the same rule for the literal.
 * `what` names the prop, `expected` says what it takes.
 */
export function checkLiteral(
  value: number,
  accepted: (value: number) => boolean,
  what: string,
  expected: string,
): void {
  if (!Token.isUnresolved(value) && !accepted(value)) throw new Error(`${what} must be ${expected}, got ${value}`);
}

/** For {@link checkLiteral}: a whole number from `min` to `max` (inclusive). */
export function wholeFrom(min: number, max: number): (value: number) => boolean {
  return (value) => Number.isInteger(value) && value >= min && value <= max;
}

/** The number variable holds a whole number from `min` to `max` (inclusive), in `unit`. */
export function wholeNumberBetween(
  variable: TerraformVariable,
  min: number,
  max: number,
  unit: string,
): TerraformVariableValidationConfig {
  const name = variableReference(variable);
  return {
    condition: `\${${name} == floor(${name}) && ${name} >= ${min} && ${name} <= ${max}}`,
    errorMessage: invalid(variable, `a whole number of ${unit} from ${min} to ${max}`),
  };
}

/** Guards each condition by the ones before it, so that a value that fails one prints that one message only. */
function firstFailing(
  conditions: { condition: string; expected: string }[],
  variable: TerraformVariable,
): TerraformVariableValidationConfig[] {
  return conditions.map(({ condition, expected }, index) => ({
    condition: `\${${[...conditions.slice(0, index).map((earlier) => `!(${earlier.condition})`), `(${condition})`].join(" || ")}}`,
    errorMessage: invalid(variable, expected),
  }));
}

/** Every byte value, 0 to 255, as base64: decoded as ISO-8859-1, the character of each byte in order. */
const BYTE_VALUES = Buffer.from([...Array(256).keys()]).toString("base64");

/** HCL: the bytes (numbers) that the base64 text `expression` encodes. Terraform has no bytes type; ISO-8859-1 maps each byte to one character. */
function decodedBytes(expression: string): string {
  const characters = (text: string) => `regexall("(?s).", textdecodebase64(${text}, "ISO-8859-1"))`;
  return `[for alphabet in [${characters(hclString(BYTE_VALUES))}] : [for c in ${characters(expression)} : index(alphabet, c)]][0]`;
}

/** HCL: the big-endian 32-bit number at `offset` of the bytes `b` (an SSH wire-format length). */
function uint32(b: string, offset: string): string {
  return `(${b}[${offset}] * 16777216 + ${b}[${offset} + 1] * 65536 + ${b}[${offset} + 2] * 256 + ${b}[${offset} + 3])`;
}

/** The SSH wire-format string `text` (a length, then its bytes), as a JSON list of byte values. */
function wireString(text: string): string {
  const bytes = Buffer.from(text);
  return JSON.stringify([0, 0, 0, bytes.length, ...bytes]);
}

/**
 * Preconditions that judge an SSH public key variable as EC2's ImportKeyPair does, without ever
 * printing it (preconditions print only their message: a private key pasted by mistake stays out of
 * the CI log): not a private key; one OpenSSH line of a type EC2 imports (ssh-ed25519, ssh-rsa);
 * base64 as ssh-keygen writes it; the blob names the line's type; and its length is the one the type
 * implies (ED25519: 51 bytes with a 32-byte key; RSA: an exponent and a modulus of 1024 to 4096 bits,
 * the lengths adding up to the blob's). Each refusal prints one message, the first that fails.
 */
export function sshPublicKeyRules(variable: TerraformVariable): TerraformVariableValidationConfig[] {
  const key = variableReference(variable);
  const bytes = (body: string) =>
    `try(alltrue([for k in [split(" ", ${key})] : alltrue([for b in [${decodedBytes("k[1]")}] : ${body}])]), false)`;
  const ed25519 = wireString("ssh-ed25519");
  const rsa = wireString("ssh-rsa");
  const modulusBytes = "(n - (b[19 + e] == 0 ? 1 : 0))";
  return firstFailing(
    [
      {
        condition: `!${patternCondition(key, "PRIVATE KEY|^-----BEGIN|PuTTY-User-Key-File|^b3BlbnNzaC1rZXktdjE")}`,
        expected:
          "the public key, the one line of the .pub file: this value is a private key, which is not shown here " +
          "(keep it secret; make a new key pair if it was shared)",
      },
      {
        condition: patternCondition(key, `^(ssh-ed25519|ssh-rsa) [A-Za-z0-9+/]+={0,2}( [^${UNPRINTABLE_CLASS}]*)?$`),
        expected:
          "an OpenSSH public key line of a type EC2 imports: ssh-ed25519 or ssh-rsa (not ECDSA or DSA), a space, " +
          "the base64 key and an optional comment",
      },
      {
        condition: `try(textencodebase64(textdecodebase64(split(" ", ${key})[1], "ISO-8859-1"), "ISO-8859-1") == split(" ", ${key})[1], false)`,
        expected:
          "the key's base64 as ssh-keygen writes it (with its padding, nothing cut or added: copy the whole line of the .pub file)",
      },
      {
        condition: bytes(
          `(k[0] == "ssh-ed25519" && jsonencode(slice(b, 0, ${JSON.parse(ed25519).length})) == ${hclString(ed25519)}) || ` +
            `(k[0] == "ssh-rsa" && jsonencode(slice(b, 0, ${JSON.parse(rsa).length})) == ${hclString(rsa)})`,
        ),
        expected:
          "a key whose data names the type of its line (an ssh-ed25519 line holds an ED25519 key, an ssh-rsa line an RSA key)",
      },
      {
        condition: bytes(
          `k[0] == "ssh-ed25519" ? length(b) == 51 && jsonencode(slice(b, 15, 19)) == "[0,0,0,32]" : ` +
            `alltrue([for e in [${uint32("b", "11")}] : alltrue([for n in [${uint32("b", "15 + e")}] : ` +
            `e >= 1 && e <= 16 && length(b) == 19 + e + n && ${modulusBytes} >= 128 && ${modulusBytes} <= 512])])`,
        ),
        expected:
          "a key of the length its type implies: ED25519 51 bytes (68 base64 characters), RSA a modulus of 1024 to 4096 bits " +
          "whose lengths add up to the key's",
      },
    ],
    variable,
  );
}

/**
 * A list(string) variable of IPv4 CIDR blocks holds each block once, compared as AWS compares them
 * (network address and prefix length: 10.0.0.0/8 and 10.0.0.0/08 are one block): AWS refuses a
 * security group rule given twice.
 */
export function distinctIpv4Cidrs(variable: TerraformVariable): TerraformVariableValidationConfig {
  const name = variableReference(variable);
  const normalized = `[for cidr in ${name} : try(format("%s/%d", cidrhost(cidr, 0), tonumber(split("/", cidr)[1])), cidr)]`;
  return {
    condition: `\${length(distinct(${normalized})) == length(${name})}`,
    errorMessage: invalid(
      variable,
      "each CIDR block once (10.0.0.0/8 and 10.0.0.0/08 are one block): AWS refuses a rule given twice",
    ),
  };
}
