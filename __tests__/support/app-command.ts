/** The cdktf app as `cdktf synth|diff|deploy` starts it: cdktf.json's "app" command. */
import { readFileSync } from "fs";
import { join, resolve } from "path";

const ROOT = resolve(__dirname, "../..");

/** cdktf.json's app command, split into its words (it holds no quoting). */
export const APP_COMMAND: readonly string[] = JSON.parse(readFileSync(join(ROOT, "cdktf.json"), "utf8")).app.split(" ");

/** The program and arguments that run the app; `node` is this Node.js, as npx would find it first on PATH. */
export function appInvocation(): { file: string; args: string[] } {
  const [file, ...args] = APP_COMMAND;
  return { file: file === "node" ? process.execPath : file, args };
}
