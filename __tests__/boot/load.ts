/**
 * What users see of an ops action: a load sent from outside the VM through its forwarded
 * ports for the whole action, as a browser and an API client would send it, over four streams: ports 80 and
 * 3000, each with one kept-alive connection and with a new connection per request. Each stream sends a request
 * every STREAMS / PER_SECOND s, or as soon as its previous one ends when that took longer: one request at a
 * time per stream, so that an emulated host that answers slowly is measured, not buried under requests
 * (20 a second that never wait for an answer overwhelmed the VM under emulation: most of them timed out with no
 * action running). A request fails on a connection error, on no answer within TIMEOUT_MS, or on any status but 200.
 */
import * as http from "http";
import { FRONT_WAIT_SECONDS } from "../../userdata/constants";
import { run, Vm } from "./vm";

/** Requests a second at most, all streams together: a busy team's traffic, which an emulated host can still answer. */
export const PER_SECOND = 20;
/**
 * A request with no whole answer by then fails: the front holds a request at most FRONT_WAIT_SECONDS (then answers
 * 502 itself), so a held request is waited for, as a browser waits, and counted by the time it took (slowest).
 */
export const TIMEOUT_MS = (FRONT_WAIT_SECONDS + 5) * 1000;

export interface LoadFigures {
  readonly requests: number;
  readonly failed: number;
  /** The slowest answered request, in ms (0 when none answered). */
  readonly slowestMs: number;
  /** The longest time between two answered requests (HTTP 200), in ms: the gap users saw. */
  readonly longestGapMs: number;
  /** Failures by cause (`ECONNREFUSED`, `ECONNRESET`, `timeout`, `HTTP 502` …), most frequent first. */
  readonly causes: readonly [string, number][];
  /**
   * The first failures (FIRST_FAILURES at most), each with its stream and when it was sent, in the load's time: where
   * to look in the guest's journal when one request of hundreds fails.
   */
  readonly firstFailures: readonly string[];
  /** When the load started (ms since the epoch), and its length, from start to stop, in ms. */
  readonly startedAt: number;
  readonly durationMs: number;
}

/** How many failures a load describes one by one (LoadFigures.firstFailures). */
const FIRST_FAILURES = 5;

/**
 * What the load asks, the moment a request times out, about its connection (the client's local port, which the guest
 * sees from 10.0.2.2 through qemu's user network): where a request went that nobody answered. Resolves with one line.
 */
export type TimeoutProbe = (clientPort: number) => Promise<string>;

export interface LoadOptions {
  /** Requests a second at most, all streams together (default PER_SECOND). */
  readonly perSecond?: number;
  /** A request with no whole answer by then fails (default TIMEOUT_MS). */
  readonly timeoutMs?: number;
  /** Asked about each timed-out request among the first failures; its line goes into that failure's description. */
  readonly probe?: TimeoutProbe;
}

export interface Load {
  /** Stops sending, waits for the requests in flight (one a stream, each bounded by TIMEOUT_MS), and counts. */
  stop(): Promise<LoadFigures>;
}

interface Stream {
  readonly port: number;
  readonly agent: http.Agent | false;
}

/** Starts the load on the VM's forwarded guest ports (`ports`, each with and without keep-alive). */
export function startLoad(
  vm: Pick<Vm, "hostPort">,
  ports: readonly number[] = [80, 3000],
  options: LoadOptions = {},
): Load {
  const { perSecond = PER_SECOND, timeoutMs = TIMEOUT_MS, probe } = options;
  const streams: Stream[] = ports.flatMap((port) => [
    { port, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) },
    { port, agent: false as const },
  ]);
  const started = Date.now();
  const answeredAt: number[] = [];
  const causes = new Map<string, number>();
  const firstFailures: string[] = [];
  const probes: Promise<void>[] = [];
  let requests = 0;
  let slowestMs = 0;

  /** One request on `stream`; resolves when it has answered or failed. */
  const send = (stream: Stream) => {
    requests++;
    const sent = Date.now();
    return new Promise<void>((resolve) => {
      let settled = false;
      const finish = (cause?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (cause) {
          causes.set(cause, (causes.get(cause) ?? 0) + 1);
          if (firstFailures.length < FIRST_FAILURES) {
            const index =
              firstFailures.push(
                `${cause} on ${stream.port}${stream.agent ? " kept-alive" : ""}, sent at +${((sent - started) / 1000).toFixed(1)} s, ` +
                  `after ${((Date.now() - sent) / 1000).toFixed(1)} s`,
              ) - 1;
            const clientPort = req.socket?.localPort;
            // Asked before the request is destroyed: its connection is still there to be seen, on both sides.
            if (cause === "timeout" && probe && clientPort) {
              probes.push(
                probe(clientPort)
                  .catch((error: Error) => error.message)
                  .then((seen) => {
                    firstFailures[index] += ` (client port ${clientPort}: ${seen})`;
                  }),
              );
            }
          }
        } else {
          answeredAt.push(Date.now());
          slowestMs = Math.max(slowestMs, Date.now() - sent);
        }
        resolve();
      };
      const req = http.get(
        { host: "127.0.0.1", port: vm.hostPort(stream.port), path: "/", agent: stream.agent },
        (res) => {
          res.resume();
          res.on("end", () => finish(res.statusCode === 200 ? undefined : `HTTP ${res.statusCode}`));
          res.on("error", (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
        },
      );
      const timer = setTimeout(() => {
        finish("timeout");
        req.destroy();
      }, timeoutMs);
      req.on("error", (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
    });
  };

  let running = true;
  const intervalMs = (1000 * streams.length) / perSecond;
  // The streams start spread over one interval, so that the requests come evenly, not four at a time.
  const loops = streams.map(async (stream, i) => {
    await new Promise((resolve) => setTimeout(resolve, (intervalMs * i) / streams.length));
    while (running) {
      const begun = Date.now();
      await send(stream);
      const rest = intervalMs - (Date.now() - begun);
      if (rest > 0 && running) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  });
  return {
    async stop() {
      running = false;
      const durationMs = Date.now() - started;
      await Promise.all(loops);
      await Promise.all(probes);
      for (const { agent } of streams) if (agent) agent.destroy();
      const sorted = [started, ...answeredAt.sort((a, b) => a - b), started + durationMs];
      const longestGapMs = Math.max(...sorted.slice(1).map((at, i) => at - sorted[i]));
      const failed = [...causes.values()].reduce((sum, count) => sum + count, 0);
      return {
        requests,
        failed,
        slowestMs,
        longestGapMs,
        causes: [...causes].sort((a, b) => b[1] - a[1]),
        firstFailures,
        startedAt: started,
        durationMs,
      };
    },
  };
}

/**
 * The boot report's row of one action's load, like `release: 412 requests, 0 failed, slowest 0.9 s`. The row holds
 * when requests were sent and none failed (the front holds them while the app restarts).
 */
export function loadRow(action: string, figures: LoadFigures): { name: string; value: string; ok: boolean } {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const causes = figures.causes.map(([cause, count]) => `${cause} ${count}`).join(", ");
  return {
    name: `${action}: requests from outside during it (80 and 3000, kept-alive and not)`,
    value:
      `${figures.requests} requests in ${s(figures.durationMs)}, ${figures.failed} failed${causes ? ` (${causes})` : ""}, ` +
      `slowest ${s(figures.slowestMs)}, longest gap without an answer ${s(figures.longestGapMs)}` +
      `${figures.firstFailures.length ? `; first failures: ${figures.firstFailures.join("; ")}` : ""}`,
    ok: figures.requests > 0 && figures.failed === 0,
  };
}

/**
 * What the guest wrote to its journal during a load (the front's, the app's, the action's and the kernel's lines; not
 * the test's own ssh sessions) and the kernel's counters of TCP connections it dropped or timed out: where a request
 * that failed went, since the guest is gone once the test ends. Never throws.
 */
export async function guestEvidence(
  vm: Pick<Vm, "ssh">,
  figures: Pick<LoadFigures, "startedAt" | "durationMs">,
): Promise<string> {
  // ±30 s: the guest's clock, set from the host's at boot, drifts under emulation.
  const since = Math.floor(figures.startedAt / 1000) - 30;
  const until = Math.ceil((figures.startedAt + figures.durationMs) / 1000) + 30;
  const result = await vm
    .ssh(
      `journalctl --no-pager -o short-precise --since=@${since} --until=@${until} | grep -v -E ' (sshd|sudo)\\[' | tail -n 300; ` +
        "nstat -az | grep -E 'Listen(Overflows|Drops)|TCP(ReqQFull|BacklogDrop|Timeouts|SynRetrans|AbortOnTimeout)'",
      { timeoutMs: 60_000 },
    )
    .catch((error: Error) => ({ code: -1, stdout: "", stderr: error.message }));
  return `${result.stdout}${result.stderr}`;
}

/**
 * The TimeoutProbe of a VM: its connection tracking's entries and its sockets for the client's port (as the guest sees
 * it: from 10.0.2.2, the port kept or, after a redirect, another in the reply), and the host's own socket, each line
 * with its spaces squeezed. Bounded by ssh's 20 s.
 */
export function vmProbe(vm: Pick<Vm, "ssh">): TimeoutProbe {
  return async (clientPort) => {
    const squeeze = (text: string) =>
      text
        .trim()
        .split("\n")
        .map((line) => line.replace(/\s+/g, " "))
        .join(" | ") || "nothing";
    const guest = await vm.ssh(
      `grep -h -E '(sport|dport)=${clientPort} ' /proc/net/nf_conntrack; ss -Htanoi '( sport = :${clientPort} or dport = :${clientPort} )'`,
      { timeoutMs: 20_000 },
    );
    const host = await run("ss", ["-Htanoi", `( sport = :${clientPort} )`], { timeoutMs: 20_000 });
    return `guest: ${squeeze(guest.stdout + guest.stderr)}; host: ${squeeze(host.stdout + host.stderr)}`;
  };
}

/**
 * Runs `action` under the load, then records the load's row with `figure` (which throws when the row does not
 * hold); `holds` adds a condition on the figures to the row's own. When it does not hold, the guest's evidence
 * (guestEvidence) is printed first. Resolves with the action's result.
 */
export async function underLoad<T>(
  vm: Pick<Vm, "hostPort" | "ssh">,
  label: string,
  figure: (name: string, value: string, ok: boolean) => void,
  action: () => Promise<T>,
  holds: (figures: LoadFigures) => boolean = () => true,
): Promise<T> {
  const load = startLoad(vm, [80, 3000], { probe: vmProbe(vm) });
  const result = await action();
  const figures = await load.stop();
  const row = loadRow(label, figures);
  const ok = row.ok && holds(figures);
  if (!ok)
    console.log(
      `${label}: the guest during the load (journal, then TCP counters):\n${await guestEvidence(vm, figures)}`,
    );
  figure(row.name, row.value, ok);
  return result;
}
