/**
 * The ops command (userdata/ops.sh), as the provisioning script installs it, run for real as root
 * against the harness's parts: MariaDB, the git server over https that insists on the token, the
 * metadata stand-in (which serves the user data), and an app unit that runs the checkout's server.js.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "fs";
import { join } from "path";
import { opsPaths, renderOpsTool, renderProvisioningScript, renderServiceUnit } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { nodeBinDir } from "../../userdata/constants";
import { answer, answersWith } from "../support/app-answer";
import { actionAuditLines, ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

const ROOT_PASSWORD = `r00t '"$HOME \`id\` %s`;
const APP_PASSWORD = `app pass "$USER" 100%`;
const TOKEN = `ghp_Ops${"T0k3n"}/+=:@`;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64(ROOT_PASSWORD),
  appDbPasswordBase64: b64(APP_PASSWORD),
  sourceHostTokenBase64: b64(TOKEN),
};
const SECRET_FORMS = [ROOT_PASSWORD, APP_PASSWORD, TOKEN, encodeURIComponent(TOKEN), ...Object.values(SECRETS)];
const server = (answer: string) =>
  `require('http').createServer((q, r) => r.end('${answer}')).listen(process.env.PORT);\n`;

describeWithTools("the ops command, run for real", ProvisioningHarness.toolsMissing(), () => {
  let h: ProvisioningHarness;
  let ops: ReturnType<typeof opsPaths>;
  const outputs: string[] = [];

  /** Runs the ops command as root through sudo by alice. */
  async function run(...args: string[]): Promise<RunResult> {
    const result = await h.runCommand(ops.command, args, { env: { SUDO_USER: "alice" } });
    outputs.push(result.output);
    return result;
  }
  const current = () => readlinkSync(h.settings.appDir).split("/").pop() ?? "";
  const releases = () =>
    readdirSync(ops.releasesDirectory)
      .filter((name) => /^\d{4}-/.test(name))
      .sort();
  const audit = () => actionAuditLines(ops.auditLog);

  beforeAll(async () => {
    h = await ProvisioningHarness.start({ sourceHostToken: TOKEN, app: true });
    ops = opsPaths(h.settings);
  });

  afterAll(async () => {
    if (process.env.OPS_DEBUG) console.log(outputs.join("\n----\n"));
    await h?.stop();
  }, TEARDOWN_MS);

  test("a first boot that fails at step 3 leaves the configuration; the tool installed beside it refuses a release and repairs the host with reprovision", async () => {
    h.fault = "step_03_start_database";
    const first = await h.run(renderProvisioningScript(h.settings, SECRETS), { retryPauseSeconds: 0 });
    expect(first.exitCode).not.toBe(0);
    expect(first.output).toContain("FAILED: step_03_start_database");
    // The first boot writes the settings (root's, no secret), and no command: the CLI installs the tool.
    expect(existsSync(ops.command)).toBe(false);
    expect(statSync(`${ops.command}.conf`).mode & 0o777).toBe(0o600);
    const conf = readFileSync(`${ops.command}.conf`, "utf8");
    expect(conf).toContain(`declare -r APP_NAME="${h.settings.appName}"`);
    expect(conf).not.toMatch(/^[a-z_0-9]+ \(\)|_B64=/m);
    for (const form of SECRET_FORMS) expect(conf).not.toContain(form);
    const installed = await h.installTool(undefined, { who: "alice" });
    expect(installed.exitCode).toBe(0);
    expect(statSync(ops.command).mode & 0o777).toBe(0o700);
    const command = readFileSync(ops.command, "utf8");
    for (const form of SECRET_FORMS) expect(command).not.toContain(form);
    expect(readFileSync(ops.auditLog, "utf8")).toMatch(
      /^\S+Z alice install-tool: none -> [0-9a-f]{12}: ok \(tool [0-9a-f]{12}\)\n$/,
    );

    const refused = await run("release", "main");
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain(`no ${h.settings.appDir}: the first boot did not get the app (see reprovision)`);

    h.fault = undefined;
    const repaired = await run("reprovision");
    expect(repaired.exitCode).toBe(0);
    expect(repaired.output).toContain("DONE step_15_install_service");
    expect(await answersWith(h.appPort, "crm")).toBe(true);
    expect(audit()).toEqual([
      expect.stringMatching(/^\S+Z alice release main: - -> -: no .* \(exit 1\)$/),
      expect.stringMatching(/^\S+Z alice reprovision: - -> -: ok$/),
    ]);
    expect(h.metadataRequests.some((r) => r.path === "/latest/user-data" && r.status === 200)).toBe(true);
  });

  test("releases lists the first boot's checkout, and rollback has nothing to go back to", async () => {
    const listed = await run("releases");
    expect(listed.exitCode).toBe(0);
    expect(listed.output).toBe(`* ${h.settings.appDir}: the first boot's checkout\n`);
    const rollback = await run("rollback");
    expect(rollback.exitCode).toBe(1);
    expect(rollback.output).toContain("ERROR: no good release before the first one: nothing to roll back to");
    expect(lstatSync(h.settings.appDir).isDirectory()).toBe(true);
  });

  test("release of a tag takes over the checkout as release 0001, builds 0002 beside it, switches, carries .env", async () => {
    const envBefore = readFileSync(join(h.settings.appDir, ".env"), "utf8");
    const sha = await h.pushCommit({ "server.js": server("crm v2") }, "v2", "refs/tags/v2");
    const released = await run("release", "v2");
    expect(released.exitCode).toBe(0);
    expect(released.output).toMatch(/the first boot's checkout is now release 0001-[0-9a-f]{7}/);
    expect(released.output).toContain(`building v2 (${sha})`);
    expect(released.output).toMatch(/crm-test\.service answers HTTP 200 on \//);
    // The front (installed before the action: ensure_front) held the requests from before the restart until the answer.
    expect(released.output).toMatch(
      /Caddy is the front of the app\n[^]*requests held at the front\n[^]*answers HTTP 200 on \/\n\S+ \S+ the front passes the requests to the app again\n/,
    );
    expect(h.frontState()).toBe("open");
    expect(current()).toBe(`0002-${sha.slice(0, 7)}`);
    expect(lstatSync(h.settings.appDir).isSymbolicLink()).toBe(true);
    expect((await answer(h.appPort))?.body).toBe("crm v2");
    expect(releases()).toEqual([expect.stringMatching(/^0001-/), `0002-${sha.slice(0, 7)}`]);
    // The .env of the first boot, in the new release as it was (mode 600 too); the checkout moved unchanged.
    expect(readFileSync(join(h.settings.appDir, ".env"), "utf8")).toBe(envBefore);
    expect(statSync(join(h.settings.appDir, ".env")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(ops.releasesDirectory, releases()[0], "export.sql"))).toBe(true);
    // Built as step 14 builds, in the new release, before the switch.
    expect(released.newCalls).toContain(
      `yarn install --ignore-engines (in ${join(ops.releasesDirectory, ".new")}, NODE_ENV=production)`,
    );
    expect(audit().pop()).toMatch(
      new RegExp(`^\\S+Z alice release v2: 0001-[0-9a-f]{7} -> 0002-${sha.slice(0, 7)}: ok$`),
    );
    const listed = await run("releases");
    expect(listed.output).toMatch(new RegExp(`^  0001-[0-9a-f]{7} initial\n\\* 0002-${sha.slice(0, 7)} v2\n$`));
  });

  test("bad input changes nothing: an unknown ref, a ref that does not build, an unknown release", async () => {
    const before = { current: current(), releases: releases() };
    const unknown = await run("release", "no-such-branch");
    expect(unknown.exitCode).toBe(1);
    expect(unknown.output).toContain(`ERROR: unknown ref no-such-branch; ${before.current} still serves`);
    const option = await run("release", "--upload-pack=touch /tmp/x");
    expect(option.exitCode).toBe(1);
    expect(option.output).toContain(
      "ERROR: release takes one branch, tag or commit: letters, digits and . _ / -, starting with a letter or digit, that git check-ref-format accepts; got '--upload-pack=touch /tmp/x'",
    );
    await h.pushCommit({ "package.json": "{ not json" }, "broken package.json", "refs/heads/unbuildable");
    const unbuildable = await run("release", "unbuildable");
    expect(unbuildable.exitCode).toBe(1);
    expect(unbuildable.output).toContain("error package.json: invalid JSON");
    expect(unbuildable.output).toContain(`ERROR: unbuildable does not build; ${before.current} still serves`);
    const missing = await run("rollback", "0099-abcdef0");
    expect(missing.exitCode).toBe(1);
    expect(missing.output).toContain("ERROR: no release 0099-abcdef0");
    const twoNames = await run("rollback", "a", "b");
    expect(twoNames.exitCode).toBe(1);
    expect({ current: current(), releases: releases() }).toEqual(before);
    // A failed build leaves nothing behind (its output is above).
    expect(readdirSync(ops.releasesDirectory).filter((name) => name.startsWith("."))).toEqual([]);
    expect((await answer(h.appPort))?.body).toBe("crm v2");
    expect(
      audit()
        .slice(-5)
        .map((line) => line.replace(/^\S+Z alice /, "")),
    ).toEqual([
      `release no-such-branch: ${before.current} -> -: unknown ref no-such-branch; ${before.current} still serves (exit 1)`,
      "release --upload-pack=touch /tmp/x: - -> -: release takes one branch, tag or commit: letters, digits and . _ / -, starting with a letter or digit, that git check-ref-format accepts; got '--upload-pack=touch /tmp/x' (exit 1)",
      `release unbuildable: ${before.current} -> -: unbuildable does not build; ${before.current} still serves (exit 1)`,
      `rollback 0099-abcdef0: ${before.current} -> 0099-abcdef0: no release 0099-abcdef0 (exit 1)`,
      `rollback a b: ${before.current} -> a: no release a (exit 1)`,
    ]);
  });

  test("a release whose server exits at start is rolled back by itself: exit 3, the previous release serves", async () => {
    const before = { current: current(), releases: releases() };
    await h.pushCommit({ "server.js": "process.exit(3);\n" }, "exits at start", "refs/heads/broken");
    const started = Date.now();
    const broken = await run("release", "broken");
    expect(broken.exitCode).toBe(3);
    expect(broken.output).toContain("the server exited with status 3");
    expect(broken.output).toMatch(/ERROR: 0003-[0-9a-f]{7} did not answer; 0002-[0-9a-f]{7} serves again/);
    // Held from before the new release's start until the previous one answered again: the new one never got a request.
    const held = broken.output
      .split("\n")
      .filter((line) => /requests held|exited with status|answers HTTP|passes the requests/.test(line))
      .map((line) => line.replace(/^\S+ \S+ /, "").replace(/\S+\.service answers/, "answers"));
    expect(held).toEqual([
      "requests held at the front",
      "the server exited with status 3",
      "requests held at the front",
      "answers HTTP 200 on /",
      "the front passes the requests to the app again",
    ]);
    expect(h.frontState()).toBe("open");
    // Told by the unit's state, not by waiting out HEALTH_SECONDS.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect({ current: current(), releases: releases() }).toEqual(before);
    expect((await answer(h.appPort))?.body).toBe("crm v2");
    expect(audit().pop()).toMatch(
      / alice release broken: 0002-\w{7} -> 0002-\w{7}: 0003-\w{7} did not answer; 0002-\w{7} serves again \(exit 3\)$/,
    );
  });

  test("one lock: a second release, and the provisioning script, are refused while a release runs, naming it", async () => {
    h.gitDelayMs = 500;
    const first = run("release", "v2");
    let second: RunResult, status: RunResult, provision: RunResult;
    try {
      const deadline = Date.now() + 20_000;
      while (!(existsSync(ops.lockFile) && readFileSync(ops.lockFile, "utf8").startsWith("release v2 by alice"))) {
        if (Date.now() > deadline) throw new Error("the first release never took the lock");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      [second, status, provision] = await Promise.all([
        run("release", "main"),
        run("status"),
        h.runCommand(join(h.dir, "provision.sh"), []),
      ]);
    } finally {
      await first;
      h.gitDelayMs = 0;
    }
    expect(second.exitCode).toBe(75);
    expect(second.output).toMatch(/ERROR: busy: release v2 by alice \(pid \d+, since \S+Z\)/);
    expect(provision.exitCode).toBe(75);
    expect(provision.output).toMatch(/ERROR: busy: release v2 by alice/);
    expect(status.output).toMatch(/^lock: release v2 by alice/m);
    expect((await first).exitCode).toBe(0);
    expect(audit().slice(-2)).toEqual([
      expect.stringMatching(/ alice release main: - -> -: busy: release v2 by alice .* \(exit 75\)$/),
      expect.stringMatching(/ alice release v2: 0002-\w{7} -> 0003-\w{7}: ok$/),
    ]);
  });

  test("rollback goes back one release, or to the one named, and a second run is a no-op", async () => {
    const [oldest, v2, newest] = releases();
    expect(current()).toBe(newest);
    const back = await run("rollback");
    expect(back.exitCode).toBe(0);
    expect(current()).toBe(v2);
    expect((await answer(h.appPort))?.body).toBe("crm v2");
    const named = await run("rollback", oldest);
    expect(named.exitCode).toBe(0);
    expect(current()).toBe(oldest);
    expect((await answer(h.appPort))?.body).toBe("crm");
    const again = await run("rollback", oldest);
    expect(again.exitCode).toBe(0);
    const listed = await run("releases");
    expect(listed.output.split("\n").filter((line) => line.startsWith("*"))).toEqual([
      expect.stringMatching(`^\\* ${oldest} `),
    ]);
    expect(
      audit()
        .slice(-3)
        .map((line) => line.replace(/^\S+Z alice /, "")),
    ).toEqual([
      `rollback: ${newest} -> ${v2}: ok`,
      `rollback ${oldest}: ${v2} -> ${oldest}: ok`,
      `rollback ${oldest}: ${oldest} -> ${oldest}: ok`,
    ]);
  });

  test("keeps the newest five releases", async () => {
    for (let i = 0; i < 3; i++) expect((await run("release", "main")).exitCode).toBe(0);
    const kept = releases();
    expect(kept.map((name) => name.slice(0, 4))).toEqual(["0002", "0003", "0004", "0005", "0006"]);
    expect(current()).toBe(kept[4]);
    expect((await answer(h.appPort))?.body).toBe("crm");
  });

  test("reads the secrets from cloud-init's copy of the user data too, and redacts what a hostile git server echoes", async () => {
    mkdirSync(join(h.userDataCopy, ".."), { recursive: true });
    writeFileSync(h.userDataCopy, h.userData!, { mode: 0o600 });
    const served = h.userData;
    h.userData = undefined;
    try {
      const before = h.metadataRequests.length;
      h.fault = "echo-token";
      const echoed = await run("release", "v2");
      expect(echoed.exitCode).not.toBe(0);
      expect(echoed.output).toContain("[REDACTED]");
      h.fault = undefined;
      const released = await run("release", "v2");
      expect(released.exitCode).toBe(0);
      expect((await answer(h.appPort))?.body).toBe("crm v2");
      expect(h.metadataRequests.slice(before).filter((r) => r.path === "/latest/user-data")).toEqual([]);
    } finally {
      h.userData = served;
      rmSync(h.userDataCopy);
    }
  });

  test("patch: check-release-update, upgrade --releasever, no reboot unless needs-restarting says so", async () => {
    const plain = await run("patch");
    expect(plain.exitCode).toBe(0);
    expect(plain.newCalls.filter((call) => call.startsWith("dnf ") || call.startsWith("systemctl reboot"))).toEqual([
      "dnf check-release-update",
      "dnf -y upgrade --releasever=latest",
      "dnf needs-restarting -r",
    ]);
    const pinned = await run("patch", "2023.9.20251117");
    expect(pinned.newCalls).toContain("dnf -y upgrade --releasever=2023.9.20251117");
    const bad = await run("patch", "latest;reboot");
    expect(bad.exitCode).toBe(1);
    expect(bad.newCalls.filter((call) => call.startsWith("dnf "))).toEqual([]);
    writeFileSync(join(h.dir, "needs-reboot"), "");
    try {
      const reboot = await run("patch");
      expect(reboot.exitCode).toBe(0);
      expect(reboot.output).toContain("Reboot is required to fully utilize these updates.: rebooting");
      expect(reboot.newCalls.slice(-1)).toEqual(["systemctl reboot"]);
    } finally {
      rmSync(join(h.dir, "needs-reboot"));
    }
    const os = readFileSync("/etc/os-release", "utf8").match(/^PRETTY_NAME=(.*)$/m)?.[1];
    expect(
      audit()
        .slice(-4)
        .map((line) => line.replace(/^\S+Z alice /, "")),
    ).toEqual([
      `patch: ${os} -> ${os}: ok`,
      `patch 2023.9.20251117: ${os} -> ${os}: ok`,
      "patch latest;reboot: - -> -: patch takes latest or a release such as 2023.9.20251117 (exit 1)",
      `patch: ${os} -> ${os} (reboot): ok`,
    ]);
  });

  test("reprovision on a healthy host changes nothing the first run settled", async () => {
    const env = readFileSync(join(h.settings.appDir, ".env"), "utf8");
    const rows = await h.query(`SELECT * FROM ${h.settings.databaseName}.customers ORDER BY id`);
    const release = current();
    const again = await run("reprovision");
    expect(again.exitCode).toBe(0);
    expect(again.output).toContain(`${h.settings.appDir} is a release of ${ops.command}: not pulling`);
    expect(again.output).toContain("export.sql was imported before; not importing it again");
    expect(readFileSync(join(h.settings.appDir, ".env"), "utf8")).toBe(env);
    expect(await h.query(`SELECT * FROM ${h.settings.databaseName}.customers ORDER BY id`)).toBe(rows);
    expect(readFileSync(join(h.host.unitDirectory, `${h.settings.appName}.service`), "utf8")).toBe(
      renderServiceUnit(h.settings),
    );
    expect(current()).toBe(release);
    expect((await answer(h.appPort))?.body).toBe("crm v2");
  });

  test("status tells the release, the unit, the answer and the last actions; it fails when the app does not answer", async () => {
    const healthy = await run("status");
    expect(healthy.exitCode).toBe(0);
    expect(healthy.output).toContain(`release: ${join(ops.releasesDirectory, current())}\n`);
    expect(healthy.output).toContain(`tool: ${renderOpsTool().version.slice(0, 12)}\n`);
    expect(healthy.output).toContain("front: open\n");
    expect(healthy.output).toContain("SubState=running\n");
    expect(healthy.output).toContain("answer: HTTP 200 on /\n");
    expect(healthy.output).toContain(audit().pop());
    await h.runCommand(join(h.dir, "stand-ins", "app-unit.sh"), ["stop"]);
    const down = await run("status");
    expect(down.exitCode).toBe(1);
    expect(down.output).toContain("answer: HTTP 000 on /\n");
  });

  test("run: a one-off command in the serving release with the unit's environment and none of root's; its status is the tool's; audited", async () => {
    const release = current();
    const script =
      'printf "%s %s %s %s %s\n" "$(pwd -P)" "$NODE_ENV" "$USER" "${SUDO_USER:-none}" "$(command -v node)"';
    const printed = await run("run", "sh", "-c", script);
    expect(printed.exitCode).toBe(0);
    const where = `${join(ops.releasesDirectory, release)} production ${h.settings.loginUser} none`;
    expect(printed.output).toContain(`${where} ${nodeBinDir(h.settings.loginHome)}/node\n`);
    // node is the unit's (the harness's stand-in records the call), with the words as they were given.
    const node = await run("run", "node", "-e", "console.log(process.env.NODE_ENV)");
    expect(node.exitCode).toBe(0);
    expect(node.newCalls).toContain("node -e console.log(process.env.NODE_ENV)");
    // Its standard input is the session's; a word with quotes, spaces and $ arrives as one argument.
    const echoed = await h.runCommand(ops.command, ["run", "sh", "-c", 'cat; printf "%s|" "$0"', `it's "$HOME" a b`], {
      env: { SUDO_USER: "alice" },
      input: "from stdin\n",
    });
    expect(echoed.exitCode).toBe(0);
    expect(echoed.output).toContain(`from stdin\nit's "$HOME" a b|`);
    const failed = await run("run", "sh", "-c", "exit 7");
    expect(failed.exitCode).toBe(7);
    expect(failed.output).not.toContain("FAILED");
    expect(audit().slice(-2)).toEqual([
      expect.stringMatching(new RegExp(` alice run sh -c exit 7: ${release} -> ${release}: started$`)),
      expect.stringMatching(new RegExp(` alice run sh -c exit 7: ${release} -> ${release}: exit 7$`)),
    ]);
    const none = await run("run");
    expect(none.exitCode).not.toBe(0);
    expect(none.output).toContain("run takes a command: npm run ops -- <stack> run -- <command...>");
  });

  test("no secret in any output, the audit log or the command", () => {
    const texts = [...outputs, readFileSync(ops.auditLog, "utf8"), readFileSync(ops.command, "utf8")];
    for (const form of SECRET_FORMS) for (const text of texts) expect(text).not.toContain(form);
    expect(outputs.length).toBeGreaterThan(20);
  });
});
