/**
 * Why a Terraform command failed, in one line for a one-line message: its first error (`Error: …`, framed or not),
 * else its first line outside its warnings. A warning is never the reason: a CLI configuration file that cannot be
 * opened (TF_CLI_CONFIG_FILE naming a missing file) is reported first on every command, before the error itself.
 */
export function terraformReason(stderr: string): string | undefined {
  const lines = stderr.split("\n");
  const error = lines.map((line) => line.replace(/^[│╷╵]/, "").trim()).find((line) => line.startsWith("Error: "));
  if (error) return error;
  let framed = false;
  for (const line of lines) {
    if (line.startsWith("╷")) framed = true;
    else if (line.startsWith("╵")) framed = false;
    else if (!framed && line.trim() !== "" && !/^There are some problems with the CLI configuration:/.test(line))
      return line.trim();
  }
  return undefined;
}
