/**
 * The host's own paths (HOST_FILES) on a stand-in host: under a directory of its own, through the rendered
 * script's header, never through a setting.
 */
import { join } from "path";
import { HOST_FILES, HostFiles } from "../../../settings/host-layout";
import { HOST_FILE_VARIABLES, shellQuote } from "../../../userdata/script";

/** The host's own paths (HOST_FILES) under `root`: where a stand-in host keeps them. */
export function hostFilesUnder(root: string): HostFiles {
  return Object.fromEntries(Object.entries(HOST_FILES).map(([name, path]) => [name, join(root, path)])) as unknown as HostFiles;
}

/**
 * A rendered script whose host paths (the header's HOST_FILE_VARIABLES) lie under `root`: the stand-in
 * hosts' own route for what is a constant on an instance, never a setting. A path the script's topology
 * has no use for is not in its header (a scale-out host's DEVICE_DIR); any other form of a line throws.
 */
export function relocateHostFiles(script: string, root: string): string {
  const moved = hostFilesUnder(root);
  for (const [name, variable] of Object.entries(HOST_FILE_VARIABLES) as [keyof HostFiles, string][]) {
    const line = `\nreadonly ${variable}=${shellQuote(HOST_FILES[name])}\n`;
    if (!script.includes(line)) {
      if (!script.includes(`\nreadonly ${variable}=`)) continue;
      throw new Error(`the script does not hold${line.trimEnd()}`);
    }
    script = script.replace(line, `\nreadonly ${variable}=${shellQuote(moved[name])}\n`);
  }
  return script;
}
