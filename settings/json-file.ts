/**
 * Reads a settings file as people save it: UTF-8 with or without a byte-order mark is read as it is;
 * everything else is refused with one line naming the file, the place (line and column, or byte
 * offset) and what is expected, in bounded time and memory: another encoding (UTF-16 or UTF-32,
 * NUL bytes, bytes that are not UTF-8: never a silent U+FFFD), a file over MAX_SETTINGS_FILE_BYTES,
 * JSON errors, objects and arrays nested deeper than MAX_NESTING, a key given twice in one object
 * (JSON.parse keeps the last, so a typo'd copy would win unseen), and lone UTF-16 surrogates
 * (`"\ud800"`, which UTF-8 cannot carry). jsonc-parser (the JSON scanner of VS Code) finds the places;
 * JSON.parse makes the value.
 */
import { isUtf8 } from "buffer";
import { closeSync, fstatSync, openSync, readSync } from "fs";
import { printParseErrorCode, visit } from "jsonc-parser";
import { SettingsFileError } from "./errors";

/** Largest settings file read: a real one is under 2 KiB. */
export const MAX_SETTINGS_FILE_BYTES = 1024 * 1024;
/** Deepest nesting of objects and arrays read: settings go two deep (`backend.type`). */
export const MAX_NESTING = 16;

/** What each of jsonc-parser's error codes says was expected. */
const EXPECTED: Record<ReturnType<typeof printParseErrorCode>, string> = {
  InvalidSymbol: "a JSON value or punctuation (JSON has no single quotes, comments or bare words)",
  InvalidNumberFormat: "a JSON number such as 300 (no leading zeros, no leading + or .)",
  PropertyNameExpected: "a property name in double quotes (and no comma after the last property)",
  ValueExpected:
    "a value: a string in double quotes, a number, an object, an array, true, false or null (and no comma after the last element)",
  ColonExpected: "a colon (:) after the property name",
  CommaExpected: "a comma (,) between two elements",
  CloseBraceExpected: "a } closing the object",
  CloseBracketExpected: "a ] closing the array",
  EndOfFileExpected: "the end of the file after the JSON value",
  InvalidCommentToken: "no comment (JSON has none)",
  UnexpectedEndOfComment: "no comment (JSON has none)",
  UnexpectedEndOfString: "a double quote closing the string on its line",
  UnexpectedEndOfNumber: "a digit",
  InvalidUnicode: "a \\u escape of four hexadecimal digits",
  InvalidEscapeCharacter: "one of JSON's escapes: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
  InvalidCharacter: "no control character inside a string (write \\n, \\t, …)",
  "<unknown ParseErrorCode>": "valid JSON",
};

/** A problem at a place of the file. */
class Refusal extends Error {
  constructor(
    readonly place: string,
    readonly problem: string,
  ) {
    super(`${place}: ${problem}`);
  }
}

/** Line and column (from 1) of a character offset. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** The file's bytes, reading at most one byte past the limit (a device or a pipe never ends). */
function readBounded(file: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new SettingsFileError(
      file,
      code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : message,
    );
  }
  try {
    if (fstatSync(fd).isDirectory()) throw new SettingsFileError(file, "it is a directory");
    const buffer = Buffer.alloc(MAX_SETTINGS_FILE_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length;) {
      read = readSync(fd, buffer, length, buffer.length - length, null);
      length += read;
    }
    if (length > MAX_SETTINGS_FILE_BYTES) {
      throw new SettingsFileError(
        file,
        `byte offset ${MAX_SETTINGS_FILE_BYTES}: the file goes on; expected a settings file of at most ${MAX_SETTINGS_FILE_BYTES} bytes`,
      );
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The text of UTF-8 bytes (a byte-order mark dropped); other encodings and invalid bytes are refused. */
function decode(bytes: Buffer): string {
  const expected = "expected UTF-8 text (save the file as UTF-8)";
  if (/^(\xff\xfe|\xfe\xff|\0\0\xfe\xff)/.test(bytes.subarray(0, 4).toString("latin1"))) {
    throw new Refusal("byte offset 0", `a UTF-16 or UTF-32 byte-order mark; ${expected}`);
  }
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  const skipped = bytes.length - body.length;
  const nul = body.indexOf(0);
  if (nul >= 0) throw new Refusal(`byte offset ${skipped + nul}`, `a NUL byte (UTF-16 text?); ${expected}`);
  if (!isUtf8(body)) {
    const bad = firstInvalidByte(body);
    throw new Refusal(
      `byte offset ${skipped + bad} (${lineAndColumn(body.subarray(0, bad).toString("utf8"), bad)})`,
      `the byte 0x${body[bad].toString(16).padStart(2, "0")} starts no valid UTF-8 character; ${expected}`,
    );
  }
  return body.toString("utf8");
}

/**
 * Offset of the first byte of `bytes` (not UTF-8) where a character goes wrong: the end of the longest
 * valid prefix. Every prefix ending on a character boundary before it is valid and none after it is,
 * and a boundary lies within any 4 bytes: so a binary search over `isUtf8` of the prefixes finds it.
 */
function firstInvalidByte(bytes: Buffer): number {
  const validNear = (end: number) =>
    [0, 1, 2, 3].some((back) => end - back >= 0 && isUtf8(bytes.subarray(0, end - back)));
  let low = 0;
  let high = bytes.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (validNear(middle)) low = middle;
    else high = middle - 1;
  }
  while (!isUtf8(bytes.subarray(0, low))) low--;
  return low;
}

/** A string holding a UTF-16 surrogate without its pair (from a `\ud800` escape): UTF-8 cannot carry it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Refuses JSON errors, deep nesting, keys given twice and lone surrogates, at their place in `text`. */
function checkStructure(text: string): void {
  const objects: (Set<string> | undefined)[] = [];
  const place = (line: number, character: number) => `line ${line + 1}, column ${character + 1}`;
  const enter = (keys: Set<string> | undefined, line: number, character: number) => {
    if (objects.length >= MAX_NESTING) {
      throw new Refusal(
        place(line, character),
        `objects and arrays nested deeper than ${MAX_NESTING}; expected a settings file (two levels deep)`,
      );
    }
    objects.push(keys);
  };
  const wellFormed = (value: unknown, line: number, character: number) => {
    if (typeof value === "string" && LONE_SURROGATE.test(value)) {
      throw new Refusal(
        place(line, character),
        "a \\u escape of half a UTF-16 surrogate pair; expected text that UTF-8 can carry (both halves, or the character itself)",
      );
    }
  };
  visit(
    text,
    {
      onObjectBegin: (_offset, _length, line, character) => enter(new Set(), line, character),
      onArrayBegin: (_offset, _length, line, character) => enter(undefined, line, character),
      onObjectEnd: () => objects.pop(),
      onArrayEnd: () => objects.pop(),
      onObjectProperty: (key, _offset, _length, line, character) => {
        wellFormed(key, line, character);
        const keys = objects[objects.length - 1];
        if (keys?.has(key)) {
          throw new Refusal(
            place(line, character),
            `the key ${JSON.stringify(key)} appears twice in one object; expected each key once (keep one)`,
          );
        }
        keys?.add(key);
      },
      onLiteralValue: (value, _offset, _length, line, character) => wellFormed(value, line, character),
      onError: (code, _offset, _length, line, character) => {
        throw new Refusal(place(line, character), `not valid JSON: expected ${EXPECTED[printParseErrorCode(code)]}`);
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
}

/** The parsed content of a JSON settings file; throws a SettingsFileError naming the place and what is expected. */
export function readJsonFile(file: string): unknown {
  const bytes = readBounded(file);
  try {
    const text = decode(bytes);
    checkStructure(text);
    try {
      return JSON.parse(text);
    } catch (error) {
      // What jsonc-parser let through (none known): V8's message, without the excerpt of the file it may quote.
      throw new Refusal(
        "JSON.parse",
        `not valid JSON: ${(error as Error).message.replace(/, ".*" is not valid JSON$/s, "")}`,
      );
    }
  } catch (error) {
    if (error instanceof Refusal) throw new SettingsFileError(file, error.message);
    throw error;
  }
}
