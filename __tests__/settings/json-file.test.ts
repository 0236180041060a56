/**
 * The settings file read as people save it: UTF-8 with or without a byte-order mark read as it is;
 * other encodings, bytes that are not UTF-8, JSON errors, deep nesting, huge files, keys given
 * twice and lone surrogates refused in one line naming the file, the place and what is expected,
 * in bounded time.
 */
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { SettingsFileError } from "../../settings/errors";
import { MAX_NESTING, MAX_SETTINGS_FILE_BYTES, readJsonFile } from "../../settings/json-file";

describe("readJsonFile", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-json-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let count = 0;
  const file = (content: string | Buffer) => {
    const path = join(dir, `settings-${count++}.json`);
    writeFileSync(path, content);
    return path;
  };
  /** The one-line message of reading `content`, after `Cannot use the settings file <file>: `. */
  const refusal = (content: string | Buffer): string => {
    const path = file(content);
    try {
      readJsonFile(path);
    } catch (error) {
      expect(error).toBeInstanceOf(SettingsFileError);
      const message = (error as Error).message;
      expect(message.split("\n")).toHaveLength(1);
      expect(message.startsWith(`Cannot use the settings file ${path}: `)).toBe(true);
      return message.slice(`Cannot use the settings file ${path}: `.length);
    }
    throw new Error("the file was read");
  };

  it("reads UTF-8 with a byte-order mark (as Windows editors save it) and with CRLF line ends, as written", () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(readJsonFile(file(Buffer.concat([bom, Buffer.from('{\r\n  "gitUser": "Jérôme 🔑"\r\n}\r\n')])))).toEqual({
      gitUser: "Jérôme 🔑",
    });
    // A U+FFFD written in the file is the user's own character, not a decoding's.
    expect(readJsonFile(file('{"a": "\ufffd \\ud83d\\udd11"}'))).toEqual({ a: "\ufffd 🔑" });
    // JSON.parse keeps "__proto__" as an ordinary key (no prototype is set).
    expect(Object.keys(readJsonFile(file('{"__proto__": {"x": 1}}')) as object)).toEqual(["__proto__"]);
  });

  it.each([
    [
      "UTF-16 LE with its byte-order mark",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a": 1}', "utf16le")]),
      "byte offset 0: a UTF-16 or UTF-32 byte-order mark; expected UTF-8 text (save the file as UTF-8)",
    ],
    [
      "UTF-16 BE with its byte-order mark",
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('{"a": 1}', "utf16le").swap16()]),
      "byte offset 0: a UTF-16 or UTF-32 byte-order mark; expected UTF-8 text (save the file as UTF-8)",
    ],
    [
      "UTF-16 without a byte-order mark",
      Buffer.from('{"a": 1}', "utf16le"),
      "byte offset 1: a NUL byte (UTF-16 text?); expected UTF-8 text (save the file as UTF-8)",
    ],
    [
      "ISO-8859-1 (é as one byte)",
      Buffer.from('{\n  "gitUser": "Jos\xe9"\n}', "latin1"),
      "byte offset 19 (line 2, column 18): the byte 0xe9 starts no valid UTF-8 character; expected UTF-8 text (save the file as UTF-8)",
    ],
    [
      "a character cut at the end of the file",
      Buffer.concat([Buffer.from('{"a": "x'), Buffer.from([0xe2, 0x82])]),
      "byte offset 8 (line 1, column 9): the byte 0xe2 starts no valid UTF-8 character; expected UTF-8 text (save the file as UTF-8)",
    ],
    [
      "an overlong encoding",
      Buffer.concat([Buffer.from('{"a": "'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
      "byte offset 7 (line 1, column 8): the byte 0xc0 starts no valid UTF-8 character",
    ],
    [
      "a UTF-16 surrogate encoded as UTF-8 (CESU-8)",
      Buffer.concat([Buffer.from('{"a": "'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      "byte offset 7 (line 1, column 8): the byte 0xed starts no valid UTF-8 character",
    ],
    [
      "a BOM, then bytes that are not UTF-8",
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a": "\xff"}', "latin1")]),
      "byte offset 10 (line 1, column 8): the byte 0xff starts no valid UTF-8 character",
    ],
  ])("refuses %s, naming the byte offset: never a silent U+FFFD", (_what, content, message) => {
    expect(refusal(content)).toContain(message);
  });

  it.each([
    ["", "line 1, column 1: not valid JSON: expected a value: a string in double quotes"],
    [
      '{ "region": "us-east-1", }',
      "line 1, column 26: not valid JSON: expected a property name in double quotes (and no comma after the last property)",
    ],
    ['{\n  "a": 1\n  "b": 2\n}', "line 3, column 3: not valid JSON: expected a comma (,) between two elements"],
    ['{"a" 1}', "line 1, column 6: not valid JSON: expected a colon (:) after the property name"],
    [
      "{'a': 1}",
      "line 1, column 2: not valid JSON: expected a JSON value or punctuation (JSON has no single quotes, comments or bare words)",
    ],
    ['{"a": 1 // note\n}', "line 1, column 9: not valid JSON: expected no comment (JSON has none)"],
    ['{"a": "x\ty"}', "line 1, column 7: not valid JSON: expected no control character inside a string"],
    ['{"a": "\\q"}', "line 1, column 7: not valid JSON: expected one of JSON's escapes"],
    ['{"a": [1, 2}', "line 1, column 12: not valid JSON: expected a comma (,) between two elements"],
    ['{"a": 1}}', "line 1, column 9: not valid JSON: expected the end of the file after the JSON value"],
    ['\u00a0{"a": 1}', "line 1, column 1: not valid JSON: expected a JSON value or punctuation"],
  ])("refuses %j at its line and column, saying what was expected", (content, message) => {
    expect(refusal(content)).toContain(message);
  });

  it("refuses a key given twice in one object, even when escaped, at the second one; the same key in other objects is no duplicate", () => {
    expect(refusal('{\n  "region": "us-east-1",\n  "\\u0072egion": "eu-west-3"\n}')).toBe(
      'line 3, column 3: the key "region" appears twice in one object; expected each key once (keep one)',
    );
    expect(readJsonFile(file('{"a": {"b": 1}, "b": {"a": "a", "c": ["a", {"a": 1}]}}'))).toEqual({
      a: { b: 1 },
      b: { a: "a", c: ["a", { a: 1 }] },
    });
  });

  it("refuses a lone surrogate escape, which UTF-8 cannot carry (it would reach the host as U+FFFD)", () => {
    expect(refusal('{"gitUser": "Bot \\ud83d"}')).toBe(
      "line 1, column 13: a \\u escape of half a UTF-16 surrogate pair; expected text that UTF-8 can carry (both halves, or the character itself)",
    );
    expect(refusal('{"\\udc00": 1}')).toContain("line 1, column 2: a \\u escape of half a UTF-16 surrogate pair");
  });

  it("reads objects and arrays nested to the limit, and refuses deeper ones at the first level too deep, in bounded time", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(readJsonFile(file(nested(MAX_NESTING)))).toBeInstanceOf(Array);
    expect(refusal(nested(MAX_NESTING + 1))).toBe(
      `line 1, column ${MAX_NESTING + 1}: objects and arrays nested deeper than ${MAX_NESTING}; expected a settings file (two levels deep)`,
    );
    const started = Date.now();
    // Half a million levels (JSON.parse and a recursive parser would overflow the stack): refused at once.
    expect(refusal(`{"a":${nested(500_000)}}`)).toContain(
      `line 1, column ${MAX_NESTING + 5}: objects and arrays nested deeper than`,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("refuses a file over the limit without reading it whole (a device that never ends, too), and reads one just under it", () => {
    const value = (length: number) => `{"a": "${"x".repeat(length)}"}`;
    expect((readJsonFile(file(value(MAX_SETTINGS_FILE_BYTES - 10))) as { a: string }).a).toHaveLength(
      MAX_SETTINGS_FILE_BYTES - 10,
    );
    const over = `byte offset ${MAX_SETTINGS_FILE_BYTES}: the file goes on; expected a settings file of at most ${MAX_SETTINGS_FILE_BYTES} bytes`;
    expect(refusal(value(MAX_SETTINGS_FILE_BYTES))).toBe(over);
    const started = Date.now();
    expect(() => readJsonFile("/dev/zero")).toThrow(`Cannot use the settings file /dev/zero: ${over}`);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("names a file it cannot open, and a directory", () => {
    expect(() => readJsonFile(join(dir, "missing.json"))).toThrow(
      `Cannot use the settings file ${join(dir, "missing.json")}: no such file`,
    );
    expect(() => readJsonFile(dir)).toThrow(`Cannot use the settings file ${dir}: it is a directory`);
  });

  it("writes a file name's control and format characters as escapes: the message stays one line", () => {
    const strange = join(dir, "a\nb\u202e.json");
    expect(() => readJsonFile(strange)).toThrow(
      `Cannot use the settings file ${join(dir, "a\\u000ab\\u202e.json")}: no such file`,
    );
  });
});
