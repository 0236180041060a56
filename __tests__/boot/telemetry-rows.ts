/**
 * The boot test's rows of the host's metrics and logs (userdata/telemetry.sh, #29), on host A: its timer
 * runs the telemetry script every minute, which sends, with the guest's real curl signing (SigV4) with the
 * metadata stand-in's role credentials, to monitoring. and logs.us-east-1.amazonaws.com, which the stand-in
 * server passes on to moto once each signature holds as AWS checks it (scripts/boot/stand-in-hosts.txt). Read
 * back from moto with the test machine's AWS CLI:
 *
 * - the timer is active; AppHealthy 1, DiskUsedPercent of the root and the data volume and MemoryUsedPercent
 *   reach moto's CloudWatch for the instance's id;
 * - the app's journal and the provisioning log reach moto's CloudWatch Logs, in the streams <id>/app and
 *   <id>/provisioning; a restart of the shipper sends no event twice;
 * - with the app stopped, a round publishes AppHealthy 0 (the health alarm's metric turns unhealthy);
 *   the app is started again before the next rows;
 * - the stand-in server refused no call's signature.
 */
import { HOST_METRIC_NAMESPACE, HOST_METRICS, hostLogGroupName } from "../../settings/host-metrics";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { MotoServer } from "../support/moto-server";
import { awsJson, motoEnvironment } from "../support/real-provider";
import { SignatureCheckingProxy } from "../support/sigv4-check";
import { BOOT_REGION, Vm } from "./vm";

/** Bound of the wait for the first round after the first boot (the timer fires each minute). */
const FIRST_ROUND_LIMIT_MS = 4 * 60_000;

/** Host A's log group: the boot test's user data names it (engineUserData), and the test makes it in moto before host A boots. */
export function bootLogGroup(stackName: string, instanceName: string): string {
  return hostLogGroupName(stackName, instanceName);
}

export interface TelemetryRowsContext {
  readonly vm: Vm;
  readonly moto: MotoServer;
  readonly settings: ProvisioningSettings;
  readonly logGroup: string;
  /** The stand-in server's check of the signatures of the calls it passes on to moto. */
  readonly signatures: SignatureCheckingProxy;
  readonly figure: (name: string, value: string, ok: boolean) => void;
}

interface Statistics {
  readonly Minimum: number;
  readonly Maximum: number;
  readonly SampleCount: number;
}

export async function telemetryRows(ctx: TelemetryRowsContext): Promise<void> {
  const { vm, moto, settings, logGroup, signatures, figure } = ctx;
  const id = (await vm.sshOk("cat /var/lib/cloud/data/instance-id")).trim();
  const instance = `Name=InstanceId,Value=${id}`;
  const aws = motoEnvironment(moto.endpoint, BOOT_REGION);
  const statistics = async (metric: string, dimensions: string[]): Promise<Statistics | undefined> => {
    const now = Date.now();
    const out = (await awsJson(
      [
        "cloudwatch",
        "get-metric-statistics",
        "--namespace",
        HOST_METRIC_NAMESPACE,
        "--metric-name",
        metric,
        "--dimensions",
        ...dimensions,
        "--start-time",
        new Date(now - 3 * 3600_000).toISOString(),
        "--end-time",
        new Date(now + 3600_000).toISOString(),
        "--period",
        "86400",
        "--statistics",
        "Minimum",
        "Maximum",
        "SampleCount",
      ],
      aws,
    )) as { Datapoints: Statistics[] };
    return out.Datapoints[0];
  };
  const events = async (stream: string): Promise<{ timestamp: number; message: string }[]> => {
    const all: { timestamp: number; message: string }[] = [];
    let token: string | undefined;
    for (let page = 0; page < 200; page++) {
      const out = (await awsJson(
        [
          "logs",
          "get-log-events",
          "--log-group-name",
          logGroup,
          "--log-stream-name",
          `${id}/${stream}`,
          "--start-from-head",
          ...(token ? ["--next-token", token] : []),
        ],
        aws,
      ).catch(() => ({ events: [], nextForwardToken: token }))) as {
        events: { timestamp: number; message: string }[];
        nextForwardToken?: string;
      };
      all.push(...out.events);
      if (out.events.length === 0 || out.nextForwardToken === token) break;
      token = out.nextForwardToken;
    }
    return all;
  };
  const timer = `${settings.appName}-telemetry.timer`;
  const service = `${settings.appName}-telemetry.service`;
  /**
   * `systemctl <verb>` of a telemetry round, waited for. Under emulation on a shared machine a round can outlast its
   * bound (TimeoutStartSec=50, which keeps rounds from overlapping); the next round ships what it did not, so a round
   * that timed out is run once more. Any other failure fails the row. The job's own message says it timed out: the
   * unit's Result may already be the timer's next round's (a fresh-clone run saw Result=success after the timeout).
   */
  const round = async (verb: "start" | "restart", before = "") => {
    const first = await vm.ssh(`${before}systemctl ${verb} ${service}`, { timeoutMs: 120_000 });
    if (first.code === 0) return;
    const result = (await vm.ssh(`systemctl show -p Result --value ${service}`)).stdout.trim();
    if (!/failed because a timeout was exceeded/.test(first.stderr) && result !== "timeout") {
      throw new Error(
        `in ${vm.name}: systemctl ${verb} ${service} failed (${first.code}, Result=${result}): ${first.stderr}`,
      );
    }
    await vm.sshOk(`systemctl start ${service}`, { timeoutMs: 120_000 });
  };

  const active = (await vm.ssh(`systemctl is-active ${timer}`)).stdout.trim();
  figure("telemetry timer", active, active === "active");

  const healthy = await vm
    .waitFor(
      "AppHealthy in moto",
      async () => {
        const seen = await statistics(HOST_METRICS.appHealthy, [instance]);
        return seen && seen.Maximum === 1 ? seen : undefined;
      },
      FIRST_ROUND_LIMIT_MS,
      5000,
    )
    .catch(() => undefined);
  figure(
    "AppHealthy reaches moto's CloudWatch",
    healthy ? `max ${healthy.Maximum}, ${healthy.SampleCount} sample(s) for ${id}` : "none",
    healthy?.Maximum === 1,
  );
  const [root, data, memory] = await Promise.all([
    statistics(HOST_METRICS.diskUsedPercent, [instance, "Name=Volume,Value=root"]),
    statistics(HOST_METRICS.diskUsedPercent, [instance, "Name=Volume,Value=data"]),
    statistics(HOST_METRICS.memoryUsedPercent, [instance]),
  ]);
  const percent = (s?: Statistics) => (s ? `${s.Maximum}%` : "none");
  figure(
    "DiskUsedPercent (root, data) and MemoryUsedPercent reach moto",
    `root ${percent(root)}, data ${percent(data)}, memory ${percent(memory)}`,
    [root, data, memory].every((s) => s !== undefined && s.Maximum > 0 && s.Maximum <= 100),
  );

  // A round now, rather than at the next minute: the journal's lines so far go out with it.
  await round("start");
  const [app, provisioning] = await Promise.all([events("app"), events("provisioning")]);
  const provisioningDone = provisioning.some((event) => /provisioning \S+: done/.test(event.message));
  figure(
    "log events reach moto's CloudWatch Logs",
    `${app.length} of the app's journal, ${provisioning.length} of the provisioning log` +
      `${provisioningDone ? ' (through "done")' : ' (NOT through "done")'}`,
    app.length > 0 && provisioningDone,
  );

  await round("restart");
  await round("start");
  const again = await events("app");
  const keys = again.map((event) => `${event.timestamp} ${event.message}`);
  const twice = keys.length - new Set(keys).size;
  figure(
    "after restarts of the shipper: app events sent twice",
    `${twice} of ${again.length}`,
    twice === 0 && again.length >= app.length,
  );

  const before = await statistics(HOST_METRICS.appHealthy, [instance]);
  await round("start", `systemctl stop ${settings.appName}.service && `);
  const after = await statistics(HOST_METRICS.appHealthy, [instance]);
  await vm.sshOk(`systemctl start ${settings.appName}.service`);
  await vm.waitForHttp(3000, 120_000);
  figure(
    "app stopped: AppHealthy published as 0",
    after ? `min ${after.Minimum}, ${after.SampleCount - (before?.SampleCount ?? 0)} new sample(s)` : "none",
    after?.Minimum === 0 && after.SampleCount > (before?.SampleCount ?? 0),
  );
  figure(
    "the host's AWS calls signed as AWS checks them (SigV4)",
    `${signatures.passed} passed, ${signatures.refused.length} refused` +
      (signatures.refused.length ? `: ${signatures.refused[0]}` : ""),
    signatures.passed > 0 && signatures.refused.length === 0,
  );
}
