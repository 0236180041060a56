/**
 * What `npm run ops -- <stack> release <ref>` sends after the ref (scripts/ops.ts: releaseWords): nothing for a stack
 * without a build or release command, else the commands and their bound, each one word of the ssh command line however
 * it is written (a real bash reads the line back); and release's --no-backup, its own option.
 */
import { spawnSync } from "child_process";
import { parseOpsArgs, releaseWords, sshArguments, USAGE } from "../../scripts/ops";
import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { UserError } from "../../scripts/cli-options";

const COMMAND = `yarn migrate --to "$(date +%F)" && echo 'it'"'"'s done' \\ ; echo déjà $HOME`;

describe("release's words after the ref", () => {
  it("are none for the example stack, whose release the host runs as before", () => {
    expect(releaseWords(parseStackSettings(exampleSettings))).toEqual([]);
    expect(releaseWords(parseStackSettings(exampleSettings), "snap-0123456789abcdef0")).toEqual([
      "--snapshot=snap-0123456789abcdef0",
    ]);
  });

  it("are the commands and their bound, each one word on the host's command line as written", () => {
    const settings = parseStackSettings({ ...exampleSettings, buildCommand: "yarn build", releaseCommand: COMMAND });
    const words = releaseWords(settings, "snap-01234567");
    expect(words).toEqual([
      "--build-command=yarn build",
      `--release-command=${COMMAND}`,
      "--command-timeout=600",
      "--snapshot=snap-01234567",
    ]);
    const request = { ...parseOpsArgs(["CrmHostStack", "release", "v2.4.0", "--host", "203.0.113.9"], {}) };
    const argv = sshArguments(
      { ...request, args: [...request.args, ...words] },
      { host: "203.0.113.9", user: "ec2-user", command: "/usr/local/sbin/crm-ops" },
    );
    // What sshd's shell gets: the words after the host, joined by spaces; printf in place of sudo -n <command>.
    const line = argv.slice(argv.indexOf("203.0.113.9") + 1).join(" ");
    expect(line.startsWith("sudo -n /usr/local/sbin/crm-ops release v2.4.0 ")).toBe(true);
    const read = spawnSync("bash", ["-c", line.replace(/^sudo -n \S+ /, "printf '%s\\0' ")], { encoding: "utf8" });
    expect(read.stdout.split("\0").slice(0, -1)).toEqual(["release", "v2.4.0", ...words]);
  });

  it("--no-backup is release's own option, in the help", () => {
    expect(parseOpsArgs(["CrmHostStack", "release", "main", "--no-backup"], {}).extra).toEqual({ "no-backup": "true" });
    expect(() => parseOpsArgs(["CrmHostStack", "restart", "--no-backup"], {})).toThrow(UserError);
    expect(USAGE).toMatch(
      /^ {2}--no-backup +release: no snapshot of the data volume before the stack's releaseCommand/m,
    );
    expect(USAGE).toMatch(/^ {2}rollback \[release\] .*not a releaseCommand's migration: expand, then contract/m);
  });
});
