/**
 * The settings of a release's own commands (settings/provisioning-settings.ts): buildCommand and releaseCommand, one
 * line of printable characters for bash -c, and releaseCommandTimeoutSeconds, a bounded number with a default. A
 * hostile value is refused in one line naming the setting and the rule; the example stack sets none of them.
 */
import { parseStackSettings } from "../../settings/stack-settings";
import { APP_COMMAND_EXPECTED, RELEASE_COMMAND_TIMEOUT_SECONDS } from "../../settings/provisioning-settings";
import exampleSettings from "../../settings/example.json";
import { settingsErrorOf } from "../support/synth";

describe("a release's build and release commands in the settings", () => {
  it("are none in the example stack, whose bound is the default", () => {
    const { provisioning } = parseStackSettings(exampleSettings);
    expect(provisioning.buildCommand).toBeUndefined();
    expect(provisioning.releaseCommand).toBeUndefined();
    expect(provisioning.releaseCommandTimeoutSeconds).toBe(RELEASE_COMMAND_TIMEOUT_SECONDS);
  });

  it("keep a command line as written: quotes, $, &&, non-ASCII", () => {
    const line = `yarn migrate --to "$(date +%F)" && echo 'déjà vu' | tee -a /tmp/x; [[ -n $A ]]`;
    const settings = parseStackSettings({
      ...exampleSettings,
      releaseCommand: line,
      buildCommand: "yarn build",
      releaseCommandTimeoutSeconds: 1800,
    });
    expect(settings.provisioning.releaseCommand).toBe(line);
    expect(settings.provisioning.buildCommand).toBe("yarn build");
    expect(settings.provisioning.releaseCommandTimeoutSeconds).toBe(1800);
  });

  it.each([
    ["a line break", "yarn migrate\nrm -rf ~", '"yarn migrate\\nrm -rf ~"'],
    ["a carriage return", "yarn migrate\r", '"yarn migrate\\r"'],
    ["a tab", "yarn\tmigrate", '"yarn\\tmigrate"'],
    ["a NUL", "yarn\u0000migrate", '"yarn\\u0000migrate"'],
    ["an escape sequence", "yarn \u001b[2Kmigrate", '"yarn \\u001b[2Kmigrate"'],
    ["a right-to-left override", "yarn migrate \u202e#", '"yarn migrate \\u202e#"'],
    ["a zero-width space", "yarn\u200bmigrate", '"yarn\\u200bmigrate"'],
    ["a line separator", "yarn\u2028migrate", '"yarn\\u2028migrate"'],
    ["nothing", "", '""'],
    ["only spaces", "   ", '"   "'],
  ])("refuse %s in one line naming the setting and the rule", (_what, value, shown) => {
    for (const key of ["releaseCommand", "buildCommand"]) {
      const message = settingsErrorOf({ ...exampleSettings, [key]: value });
      expect(message).toBe(`Invalid setting "${key}" (got ${shown}): expected ${APP_COMMAND_EXPECTED}.`);
      expect(message.split("\n")).toHaveLength(1);
    }
  });

  it("refuse a command longer than 1000 characters, and one that is no string", () => {
    expect(settingsErrorOf({ ...exampleSettings, releaseCommand: "x".repeat(1001) })).toMatch(
      /^Invalid setting "releaseCommand" \(got "x+… \(1003 characters\)\): expected one line of 1 to 1000 printable characters/,
    );
    expect(
      parseStackSettings({ ...exampleSettings, releaseCommand: "x".repeat(1000) }).provisioning.releaseCommand,
    ).toHaveLength(1000);
    expect(settingsErrorOf({ ...exampleSettings, releaseCommand: ["yarn", "migrate"] })).toBe(
      `Invalid setting "releaseCommand" (got ["yarn","migrate"]): expected ${APP_COMMAND_EXPECTED}.`,
    );
  });

  it.each([[9], [7201], [60.5], ["600"]])("refuse the bound %p", (value) => {
    expect(settingsErrorOf({ ...exampleSettings, releaseCommandTimeoutSeconds: value })).toMatch(
      /^Invalid setting "releaseCommandTimeoutSeconds" \(got .*\): expected a whole number of seconds from 10 to 7200\.$/,
    );
  });

  it("are refused on the scale-out topology, whose hosts' first boot does not run them yet", () => {
    const scaleOut = { ...exampleSettings, topology: "scale-out", secrets: "parameter-store" };
    expect(parseStackSettings(scaleOut).provisioning.releaseCommand).toBeUndefined();
    expect(settingsErrorOf({ ...scaleOut, releaseCommand: "yarn migrate" })).toBe(
      'Invalid setting "releaseCommand" (got "yarn migrate"): expected no releaseCommand with "topology": "scale-out" yet (its hosts ' +
        "deploy release_ref at their first boot, which does not run it; only a single host's npm run ops release does).",
    );
  });
});
