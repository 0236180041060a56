/**
 * The host's metrics and logs (userdata/telemetry.sh), as the provisioning script installs them, run for
 * real as root with the machine's real curl, which signs each call (SigV4) with the metadata stand-in's role
 * credentials; the harness's `curl` stand-in sends the AWS endpoints to moto's server, through a proxy
 * that checks each signature as AWS does (moto takes any, support/sigv4-check.ts): the metrics of settings/host-metrics.ts
 * reach CloudWatch, the app's journal (a real journal file, read by the real journalctl by cursor), the
 * provisioning log and the audit log reach the log group; a stop in the middle of a round (SIGTERM, as
 * `systemctl restart` sends) loses no line and sends none twice; a stopped app is reported unhealthy.
 */
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { ChildProcess, spawnSync } from "child_process";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "fs";
import { join } from "path";
import { secretParameterNames } from "../../constructs/secret-parameters";
import {
  opsPaths,
  renderProvisioningScript,
  renderTelemetryService,
  renderTelemetryTimer,
  telemetryPaths,
} from "../../userdata";
import { HOST_METRIC_NAMESPACE, HOST_METRICS, hostLogGroupName } from "../../settings/host-metrics";
import { SecretParameterNames } from "../../settings/provisioning-settings";
import { TEST_ROLE_CREDENTIALS } from "../support/harness/metadata-service";
import { answersWith } from "../support/app-answer";
import { findMotoServer, MotoServer } from "../support/moto-server";
import {
  JOURNAL_REMOTE,
  ProvisioningHarness,
  RunResult,
  TEST_INSTANCE_ID,
  TEST_REGION,
} from "../support/provisioning-harness";
import { awsJson, motoEnvironment } from "../support/real-provider";
import { mustExec } from "../support/harness/shared";
import { describeWithTools } from "../support/required-tools";
import { SignatureCheckingProxy } from "../support/sigv4-check";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(300_000);

const NAMES = { region: TEST_REGION, ...secretParameterNames("CrmHostStack") } satisfies SecretParameterNames;
const LOG_GROUP = hostLogGroupName("CrmHostStack", "crm-host");
const awsMissing = spawnSync("bash", ["-c", "command -v aws"]).status === 0 ? [] : ["the AWS CLI (aws)"];
const journalMissing = existsSync(JOURNAL_REMOTE) ? [] : [`${JOURNAL_REMOTE} (Debian's systemd-journal-remote)`];
const motoServer = findMotoServer();

describeWithTools(
  "the host's metrics and logs, shipped for real to moto with curl's SigV4 signing",
  [...ProvisioningHarness.toolsMissing(), ...(motoServer ? [] : ["moto_server"]), ...awsMissing, ...journalMissing],
  () => {
    let moto: MotoServer;
    let signatures: SignatureCheckingProxy;
    let h: ProvisioningHarness;
    let provisioned: RunResult;
    const journal: string[] = [];

    /** The real AWS CLI against moto, as the test's own eyes; its output as JSON. */
    const aws = (...args: string[]) => awsJson(args, motoEnvironment(moto.endpoint, TEST_REGION));
    const messages = async (stream: string): Promise<string[]> => {
      const all: string[] = [];
      let token: string | undefined;
      for (let page = 0; page < 100; page++) {
        const out = (await aws(
          "logs",
          "get-log-events",
          "--log-group-name",
          LOG_GROUP,
          "--log-stream-name",
          `${TEST_INSTANCE_ID}/${stream}`,
          "--start-from-head",
          ...(token ? ["--next-token", token] : []),
        )) as { events: { message: string }[]; nextForwardToken: string };
        all.push(...out.events.map((event) => event.message));
        if (out.events.length === 0 || out.nextForwardToken === token) break;
        token = out.nextForwardToken;
      }
      return all;
    };
    const statistics = async (metric: string, dimensions: string[]) => {
      const now = Date.now();
      const out = (await aws(
        "cloudwatch",
        "get-metric-statistics",
        "--namespace",
        HOST_METRIC_NAMESPACE,
        "--metric-name",
        metric,
        "--dimensions",
        ...dimensions,
        "--start-time",
        new Date(now - 3600_000).toISOString(),
        "--end-time",
        new Date(now + 3600_000).toISOString(),
        "--period",
        "86400",
        "--statistics",
        "Minimum",
        "Maximum",
        "SampleCount",
      )) as { Datapoints: { Minimum: number; Maximum: number; SampleCount: number }[] };
      return out.Datapoints[0];
    };
    const instance = `Name=InstanceId,Value=${TEST_INSTANCE_ID}`;
    const round = (control?: (child: ChildProcess) => void) =>
      h.runCommand(telemetryPaths(h.settings).script, [], { control, timeoutMs: 120_000 });
    const addJournal = async (count: number, tag: string) => {
      const lines = Array.from({ length: count }, (_, i) => `${tag} line ${i} "quoted" \\back\ttab é`);
      await h.appendJournal(`${h.settings.appName}.service`, lines);
      journal.push(...lines);
    };

    beforeAll(async () => {
      moto = await MotoServer.start(motoServer!);
      // The host's calls (the AWS CLI's of the modules, curl's of the telemetry) with the role's key; the harness's SSM client with moto's.
      signatures = new SignatureCheckingProxy(Number(new URL(moto.endpoint).port), {
        [TEST_ROLE_CREDENTIALS.accessKeyId]: TEST_ROLE_CREDENTIALS.secretAccessKey,
        moto: "moto",
      });
      await signatures.start();
      h = await ProvisioningHarness.start({ app: true, awsEndpoint: signatures.endpoint });
      const ssm = new SSMClient({
        region: TEST_REGION,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
      for (const [name, value] of [
        [NAMES.dbRootPassword, "root-pw"],
        [NAMES.appDbPassword, "app-pw"],
        [NAMES.sourceHostToken, h.sourceHostToken],
      ]) {
        await ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: "SecureString", Overwrite: true }));
      }
      ssm.destroy();
      // The stack makes the log group (HostLogGroup); the host only writes to it.
      await aws("logs", "create-log-group", "--log-group-name", LOG_GROUP);
      provisioned = await h.run(renderProvisioningScript(h.settings, NAMES, "", "", undefined, LOG_GROUP));
      if (provisioned.exitCode !== 0) console.error(provisioned.output);
    });

    afterAll(async () => {
      await h?.stop();
      await signatures?.stop();
      await moto?.stop();
    }, TEARDOWN_MS);

    test("provisioning installs the script (root's), the service and the timer, and starts the timer before step 1", () => {
      expect(provisioned.exitCode).toBe(0);
      const paths = telemetryPaths(h.settings);
      expect((statSync(paths.script).mode & 0o777).toString(8)).toBe("700");
      expect(readFileSync(join(h.host.unitDirectory, "crm-test-telemetry.service"), "utf8")).toBe(
        renderTelemetryService(h.settings),
      );
      expect(readFileSync(join(h.host.unitDirectory, "crm-test-telemetry.timer"), "utf8")).toBe(
        renderTelemetryTimer(h.settings),
      );
      const calls = provisioned.newCalls;
      expect(calls.indexOf("systemctl start crm-test-telemetry.timer")).toBeGreaterThanOrEqual(0);
      expect(calls.indexOf("systemctl start crm-test-telemetry.timer")).toBeLessThan(
        calls.findIndex((call) => call.startsWith("dnf ")),
      );
      expect(calls).toContain("systemctl enable --no-reload crm-test-telemetry.timer");
    });

    test("a round publishes AppHealthy 1, the root disk's and memory's use, and ships the journal, the provisioning log and the audit log", async () => {
      await addJournal(3, "first");
      writeFileSync(opsPaths(h.settings).auditLog, "2026-01-01T00:00:00Z alice release v2: ok\n", { flag: "a" });
      // The first boot starts the app's unit and does not wait for it (the original stack's last step); a round reports
      // what answers at that moment, so the app is given its start first (seconds under load).
      expect(await answersWith(h.appPort, "crm", 60_000)).toBe(true);
      const first = await round();
      if (first.exitCode !== 0 || process.env.TELEMETRY_DEBUG) console.error(first.output);
      expect({ code: first.exitCode, output: first.output }).toEqual({ code: 0, output: expect.any(String) });
      expect(await statistics(HOST_METRICS.appHealthy, [instance])).toMatchObject({
        Minimum: 1,
        Maximum: 1,
        SampleCount: 1,
      });
      const disk = await statistics(HOST_METRICS.diskUsedPercent, [instance, "Name=Volume,Value=root"]);
      expect(disk.Maximum).toBeGreaterThan(0);
      expect(disk.Maximum).toBeLessThanOrEqual(100);
      const memory = await statistics(HOST_METRICS.memoryUsedPercent, [instance]);
      expect(memory.Maximum).toBeGreaterThan(0);
      expect(memory.Maximum).toBeLessThan(100);
      // No data volume on this host: no data disk metric.
      expect(await statistics(HOST_METRICS.diskUsedPercent, [instance, "Name=Volume,Value=data"])).toBeUndefined();
      expect(await messages("app")).toEqual(journal);
      const provisioningLog = readFileSync(h.settings.logFile, "utf8").split("\n").slice(0, -1);
      // Every line but the empty ones, which CloudWatch Logs refuses.
      expect(await messages("provisioning")).toEqual(provisioningLog.filter((line) => line !== ""));
      expect(await messages("ops")).toEqual(
        readFileSync(opsPaths(h.settings).auditLog, "utf8").split("\n").slice(0, -1),
      );
      // Signed as AWS checks it; no secret (the app's, the role's) in any command's arguments.
      expect(signatures.refused).toEqual([]);
      expect(
        first.calls.filter((call) => call.startsWith("curl ") && call.includes("--aws-sigv4 aws:amz:us-east-1:logs"))
          .length,
      ).toBeGreaterThanOrEqual(3);
      expect(first.calls.filter((call) => /r00t|root-pw|app-pw|moto-test-secret|moto-test-session/.test(call))).toEqual(
        [],
      );
    });

    test("a round with nothing new sends nothing; new lines of a file are shipped once, a line still being written waits", async () => {
      const before = await messages("provisioning");
      const quiet = await round();
      expect(quiet.exitCode).toBe(0);
      expect(quiet.newCalls.filter((call) => call.includes("Logs_20140328.PutLogEvents"))).toEqual([]);
      writeFileSync(h.settings.logFile, "appended whole line\npartial", { flag: "a" });
      await round();
      expect((await messages("provisioning")).slice(before.length)).toEqual(["appended whole line"]);
      writeFileSync(h.settings.logFile, " line, now whole\n", { flag: "a" });
      await round();
      expect((await messages("provisioning")).slice(before.length)).toEqual([
        "appended whole line",
        "partial line, now whole",
      ]);
    });

    test("stops in the middle of rounds (SIGTERM, as systemctl restart sends) lose no entry and send none twice", async () => {
      const cutShort: boolean[] = [];
      for (const delayMs of [150, 600, 1200, 2500]) {
        await addJournal(1200, `batch-${delayMs}`);
        const stopped = await round((child) =>
          setTimeout(() => {
            try {
              process.kill(-child.pid!, "SIGTERM");
            } catch {
              /* ended */
            }
          }, delayMs),
        );
        expect(stopped.exitCode).not.toBeNull();
        cutShort.push((await messages("app")).length < journal.length);
      }
      // The stops did come in the middle of rounds: some left lines for the next one.
      expect(cutShort).toContain(true);
      const last = await round();
      expect(last.exitCode).toBe(0);
      const shipped = await messages("app");
      expect(shipped.length).toBe(journal.length);
      expect(shipped).toEqual(journal);
    });

    /**
     * A round with a one-off `command` first on PATH: its first call runs `then` (bash, with REAL the real command), then
     * sends SIGTERM to the round's process group, as systemd signals every process of the unit. Returns the round, and
     * whether the stop came.
     */
    const stoppedAt = async (command: string, then: string) => {
      const dir = mkdtempSync(join(h.dir, `stop-at-${command}-`));
      const mark = join(dir, "fired");
      const real = spawnSync("bash", ["-c", `command -v ${command}`], { encoding: "utf8" }).stdout.trim();
      writeFileSync(
        join(dir, command),
        `#!/bin/bash\nREAL='${real}'\nif [[ ! -e '${mark}' ]]; then : >'${mark}'; ${then}; kill -TERM 0; fi\nexec "$REAL" "$@"\n`,
        { mode: 0o755 },
      );
      const run = await h.runCommand(telemetryPaths(h.settings).script, [], {
        timeoutMs: 120_000,
        env: { PATH: `${dir}:${h.scriptEnv().PATH}` },
      });
      return { ...run, stopped: existsSync(mark) };
    };

    test("a stop signal as a batch's position is kept sends the batch once", async () => {
      const before = (await messages("app")).length;
      await addJournal(600, "stop-at-move");
      const stopped = await stoppedAt("mv", ":");
      expect({ stopped: stopped.stopped, code: stopped.exitCode }).toEqual({ stopped: true, code: 0 });
      // The stop ended the round after its first batch (500 lines): the rest is the next round's.
      expect((await messages("app")).length).toBe(before + 500);
      expect((await round()).exitCode).toBe(0);
      expect(await messages("app")).toEqual(journal);
    });

    test("a stop signal while a batch is made, cut short, sends none of it; the next round sends it whole", async () => {
      const before = (await messages("app")).length;
      await addJournal(300, "stop-at-batch");
      // iconv, the batch's last command, writes its output but the end of the last line's position, then the stop comes:
      // every message whole, a cursor that is not one.
      const stopped = await stoppedAt("iconv", 'out=$("$REAL" "$@"); printf %s "${out:0:${#out}-10}"');
      expect({ stopped: stopped.stopped, code: stopped.exitCode }).toEqual({ stopped: true, code: 0 });
      expect((await messages("app")).length).toBe(before);
      expect((await round()).exitCode).toBe(0);
      expect(await messages("app")).toEqual(journal);
    });

    test("the proxy refuses what AWS refuses: a call signed with another secret, an unsigned call", async () => {
      const before = signatures.refused.length;
      // curl as the script signs (the proxy answers in this process: not spawnSync).
      const call = async (secret?: string) =>
        await mustExec(
          "curl",
          [
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            ...(secret
              ? ["--aws-sigv4", "aws:amz:us-east-1:logs", "--user", `${TEST_ROLE_CREDENTIALS.accessKeyId}:${secret}`]
              : []),
            "-H",
            "Content-Type: application/x-amz-json-1.1",
            "-H",
            "X-Amz-Target: Logs_20140328.DescribeLogGroups",
            "--data-binary",
            "{}",
            `${signatures.endpoint}/`,
          ],
          { timeoutMs: 30_000 },
        );
      expect(await call(TEST_ROLE_CREDENTIALS.secretAccessKey)).toBe("200");
      expect(await call("another-secret")).toBe("403");
      expect(await call()).toBe("403");
      expect(signatures.refused.slice(before)).toEqual([
        expect.stringMatching(/^SignatureDoesNotMatch/),
        expect.stringMatching(/^no SigV4 Authorization/),
      ]);
    });

    test("a stopped app is published as AppHealthy 0", async () => {
      const before = await statistics(HOST_METRICS.appHealthy, [instance]);
      const stop = join(h.dir, "stop-app.sh");
      writeFileSync(stop, `systemctl stop ${h.settings.appName}.service\n`);
      expect((await h.runCommand(stop, [])).exitCode).toBe(0);
      expect((await round()).exitCode).toBe(0);
      const after = await statistics(HOST_METRICS.appHealthy, [instance]);
      expect(after).toMatchObject({ Minimum: 0, SampleCount: before.SampleCount + 1 });
    });
  },
);
