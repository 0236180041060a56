/**
 * The app's port is written once in code (settings/ports.ts): everything else, the shell included
 * (through the rendered header), takes it from there. Comments may name it; code may not.
 */
import { readdirSync, readFileSync, statSync } from "fs";
import { join, relative, resolve } from "path";
import { APP_PORT } from "../settings/ports";

const root = resolve(__dirname, "..");

/** The project's source files of the given folders (and main.ts), recursively. */
function sources(folders: string[]): string[] {
  const walk = (path: string): string[] =>
    statSync(path).isDirectory()
      ? readdirSync(path).flatMap((name) => walk(join(path, name)))
      : /\.(ts|sh)$/.test(path)
        ? [path]
        : [];
  return [...folders.flatMap((folder) => walk(join(root, folder))), join(root, "main.ts")];
}

/** A line that is a comment only (TypeScript's or the shell's). */
const comment = (line: string) => /^\s*(\/\/|\/\*|\*|#)/.test(line);

describe("the app's port", () => {
  it("is written once in code, in settings/ports.ts", () => {
    const written = sources(["settings", "userdata", "constructs", "topologies", "scripts"]).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .map((line) => ({ where: relative(root, file), line }))
        .filter(({ line }) => !comment(line) && new RegExp(`\\b${APP_PORT}\\b`).test(line)),
    );
    expect(written.map(({ where, line }) => `${where}: ${line.trim()}`).sort()).toEqual([
      `settings/ports.ts: export const APP_PORT = ${APP_PORT};`,
    ]);
  });
});
