/**
 * The shell files that run as they are written pass shellcheck (warnings and errors; sourced files
 * followed): scripts/ (the test command, CI, the boot image, the CDK Terrain conversion) and the
 * provisioning harness's stand-ins (__tests__/support/stand-ins). userdata/'s files are checked as the
 * user data renders them (__tests__/userdata/script.test.ts), where their header defines what they read.
 */
import { spawnSync } from "child_process";
import { resolve } from "path";
import { describeWithTools } from "./support/required-tools";
import { findOnPath } from "./support/workflow-runner";

const root = resolve(__dirname, "..");

/** The repository's .sh files under `folders`, as git lists them (tracked or not, ignored ones left out). */
function shellFiles(folders: string[]): string[] {
  const listed = spawnSync(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "--", ...folders.map((f) => `${f}/*.sh`)],
    { cwd: root, encoding: "utf8" },
  );
  return listed.stdout.split("\n").filter((file) => file !== "");
}

describeWithTools(
  "shell files",
  ["shellcheck"].filter((tool) => !findOnPath(tool)),
  () => {
    it.each([["scripts"], ["__tests__/support/stand-ins"]])("of %s pass shellcheck", (folder) => {
      const files = shellFiles([folder]);
      expect(files.length).toBeGreaterThan(folder === "scripts" ? 8 : 15);
      const checked = spawnSync("shellcheck", ["--external-sources", "--severity=warning", ...files], {
        cwd: root,
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(checked.stdout + checked.stderr).toBe("");
      expect(checked.status).toBe(0);
    });
  },
);
