/**
 * Reads a settings file as JSON, refusing what JSON.parse lets through silently: a key given twice
 * in one object (JSON.parse keeps the last, so a typo'd copy would win unseen). Problems are
 * SettingsFileErrors: one line naming the file and the problem, no stack trace.
 */
import { readFileSync } from "fs";
import { SettingsFileError } from "./errors";

/** Line and column (from 1) of a character offset. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/**
 * The first key that an object of `text` (valid JSON) holds twice, with where it is, or undefined.
 * Keys are compared decoded, so "region" and "\u0072egion" are the same key.
 */
export function duplicateKey(text: string): { key: string; where: string } | undefined {
  const objects: (Set<string> | undefined)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{") objects.push(new Set());
    else if (c === "[") objects.push(undefined);
    else if (c === "}" || c === "]") objects.pop();
    else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const keys = objects[objects.length - 1];
      let next = end + 1;
      while (/\s/.test(text[next] ?? "")) next++;
      if (keys && text[next] === ":") {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return { key, where: lineAndColumn(text, i) };
        keys.add(key);
      }
      i = end;
    }
  }
  return undefined;
}

/** The parsed content of a JSON settings file; throws a SettingsFileError naming the problem. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new SettingsFileError(file, code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied"
      : code === "EISDIR" ? "it is a directory" : message);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8 may quote a piece of the file in its message ("…", "<excerpt>" is not valid JSON): leave it out.
    const reason = (error as Error).message.replace(/, ".*" is not valid JSON$/s, "");
    const position = /at position (\d+)/.exec(reason);
    throw new SettingsFileError(file, `not valid JSON: ${reason}${position ? ` (${lineAndColumn(text, Number(position[1]))})` : ""}`);
  }
  const duplicate = duplicateKey(text);
  if (duplicate) {
    throw new SettingsFileError(file,
      `the key ${JSON.stringify(duplicate.key)} appears twice in one object (again at ${duplicate.where}); keep one`);
  }
  return value;
}
