/**
 * The host's own paths (HOST_FILES) on a stand-in host: under a directory of its own, through the rendered
 * script's header, never through a setting.
 */
import { join } from "path";
import { HOST_FILES, HostFiles } from "../../../settings/host-layout";
import { HOST_FILE_VARIABLES, shellQuote } from "../../../userdata/script";

/** The host's own paths (HOST_FILES) under `root`: where a stand-in host keeps them. */
export function hostFilesUnder(root: string): HostFiles {
  return Object.fromEntries(
    Object.entries(HOST_FILES).map(([name, path]) => [name, join(root, path)]),
  ) as unknown as HostFiles;
}

/**
 * A rendered script whose host paths (the header's HOST_FILE_VARIABLES) lie under `root`: the stand-in
 * hosts' own route for what is a constant on an instance, never a setting. Each is an assignment of a readonly line
 * of the header (`readonly VAR='path'`, alone or beside others); a path the script's topology has no use for is not in
 * its header (a scale-out host's DEVICE_DIR); a variable there in any other form throws.
 */
export function relocateHostFiles(script: string, root: string): string {
  const moved = hostFilesUnder(root);
  for (const [name, variable] of Object.entries(HOST_FILE_VARIABLES) as [keyof HostFiles, string][]) {
    const assignment = new RegExp(
      `(\n(?:readonly (?:[A-Z0-9_]+='[^'\n]*' )*))${variable}=${escape(shellQuote(HOST_FILES[name]))}(?=[ \n])`,
    );
    if (!assignment.test(script)) {
      if (!new RegExp(`[\n ]${variable}=`).test(script)) continue;
      throw new Error(`the script does not hold readonly ${variable}=${shellQuote(HOST_FILES[name])}`);
    }
    script = script.replace(assignment, (_match, before: string) => `${before}${variable}=${shellQuote(moved[name])}`);
  }
  return script;
}

/** A string as a regular expression that matches it literally. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
