/** A fresh copy of the project, as a new clone holds it, for tests that run its commands as a user does. */
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from "fs";
import { execFileSync } from "child_process";
import { tmpdir } from "os";
import { dirname, join, resolve } from "path";

const ROOT = resolve(__dirname, "../..");

/** The repository's tracked files (and new ones git does not ignore) copied into a temporary directory, with node_modules linked in. */
export function freshCopy(prefix = "crm-app-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      copyFileSync(join(ROOT, file), join(dir, file));
    } catch {
      // a file deleted in the working tree but still in the index
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}
