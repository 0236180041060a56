/**
 * The boot test's load (load.ts) against a local server standing in for the VM's forwarded ports: it counts
 * what a client sees, refused connections and bad statuses as failures, and the gap while nothing answered.
 */
import { createServer, Server } from "http";
import { AddressInfo } from "net";
import { guestEvidence, loadRow, startLoad, vmProbe } from "./load";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the boot test's load from outside the VM", () => {
  let server: Server;
  let status = 200;
  let port = 0;
  const listen = () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  // Both guest ports (80, 3000) lead to the one local server.
  const vm = { hostPort: () => port };

  beforeEach(async () => {
    status = 200;
    port = 0;
    server = createServer((_request, res) => {
      res.statusCode = status;
      res.end("crm");
    });
    await listen();
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    if (server.listening) await close();
  });

  test("a server that answers all along: every request answered, the pace kept, the row holds", async () => {
    const load = startLoad(vm);
    await sleep(1000);
    const figures = await load.stop();
    expect(figures.failed).toBe(0);
    expect(figures.requests).toBeGreaterThanOrEqual(10);
    expect(figures.requests).toBeLessThanOrEqual(25);
    // Under 1 s, the outage the next test makes and sees (on a loaded machine the event loop alone can stall 600 ms).
    expect(figures.longestGapMs).toBeLessThan(1000);
    const row = loadRow("restart", figures);
    expect(row.ok).toBe(true);
    expect(row.value).toMatch(
      /^\d+ requests in \d+\.\d s, 0 failed, slowest \d+\.\d s, longest gap without an answer 0\.\d s$/,
    );
  });

  test("a server that goes away for a second, then answers 503: refused connections and bad statuses are failures, the gap is seen", async () => {
    const load = startLoad(vm);
    await sleep(500);
    await close();
    await sleep(1000);
    status = 503;
    await listen();
    await sleep(300);
    status = 200;
    await sleep(500);
    const figures = await load.stop();
    const causes = Object.fromEntries(figures.causes);
    expect(causes.ECONNREFUSED).toBeGreaterThanOrEqual(5);
    expect(causes["HTTP 503"]).toBeGreaterThanOrEqual(2);
    expect(figures.failed).toBe(Object.values(causes).reduce((sum, count) => sum + count, 0));
    expect(figures.longestGapMs).toBeGreaterThanOrEqual(1000);
    expect(loadRow("release broken", figures).value).toMatch(/ failed \(ECONNREFUSED \d+, HTTP 503 \d+/);
    // The first failures one by one, each with its cause (refused, or reset on a kept-alive connection), stream and time.
    expect(figures.firstFailures).toHaveLength(5);
    for (const failure of figures.firstFailures) {
      expect(failure).toMatch(
        /^(ECONNREFUSED|ECONNRESET|HTTP 503) on \d+( kept-alive)?, sent at \+\d+\.\d s, after \d+\.\d s$/,
      );
    }
    expect(loadRow("release broken", figures).value).toContain(`; first failures: ${figures.firstFailures.join("; ")}`);
  });

  test("a row holds only with requests sent and none failed", () => {
    const row = (requests: number, failed: number) =>
      loadRow("release v2", {
        requests,
        failed,
        slowestMs: 10,
        longestGapMs: 100,
        causes: failed ? [["ECONNREFUSED", failed]] : [],
        firstFailures: [],
        startedAt: 0,
        durationMs: 10_000,
      });
    expect(row(40, 40).ok).toBe(false);
    expect(row(0, 0).ok).toBe(false);
    expect(row(40, 1).ok).toBe(false);
    expect(row(40, 0).ok).toBe(true);
  });

  test("a request nobody answers: a timeout, described with what the probe saw of its connection then (by its client port)", async () => {
    const hung = new Set<number>();
    server.removeAllListeners("request");
    // The first request of each connection hangs; the agent's kept-alive streams then time out once each.
    server.on("request", (request, res) => {
      if (!hung.has(request.socket.remotePort ?? 0) && hung.size < 2)
        return void hung.add(request.socket.remotePort ?? 0);
      res.end("crm");
    });
    const probed: number[] = [];
    const load = startLoad(vm, [80], {
      timeoutMs: 300,
      probe: async (clientPort) => {
        probed.push(clientPort);
        return `seen ${clientPort}`;
      },
    });
    await sleep(800);
    const figures = await load.stop();
    expect(Object.fromEntries(figures.causes).timeout).toBe(2);
    expect(probed.sort()).toEqual([...hung].sort());
    const timeouts = figures.firstFailures.filter((failure) => failure.startsWith("timeout"));
    expect(timeouts).toHaveLength(2);
    for (const failure of timeouts) {
      expect(failure).toMatch(
        /^timeout on 80( kept-alive)?, sent at \+\d+\.\d s, after 0\.\d s \(client port (\d+): seen \2\)$/,
      );
    }
  });

  test("a slow server: one request at a time a stream, none piled up, none failed", async () => {
    server.removeAllListeners("request");
    server.on("request", (_request, res) => setTimeout(() => res.end("crm"), 600));
    const load = startLoad(vm);
    await sleep(1500);
    const figures = await load.stop();
    expect(figures.failed).toBe(0);
    // 4 streams, each at most one request per 600 ms answer: 3 rounds, the last waited for by stop.
    expect(figures.requests).toBeGreaterThanOrEqual(4);
    expect(figures.requests).toBeLessThanOrEqual(16);
    expect(figures.slowestMs).toBeGreaterThanOrEqual(550);
  });
});

describe("the guest's evidence of a failed load", () => {
  test("asks the guest's journal for the load's time with 30 s either side, and its TCP drop counters", async () => {
    const commands: string[] = [];
    const vm = {
      ssh: async (command: string) => {
        commands.push(command);
        return { code: 0, stdout: "journal\n", stderr: "" };
      },
    };
    expect(await guestEvidence(vm, { startedAt: 1_800_000_000_500, durationMs: 60_000 })).toBe("journal\n");
    expect(commands).toHaveLength(1);
    expect(commands[0]).toContain("journalctl --no-pager -o short-precise --since=@1799999970 --until=@1800000091 ");
    expect(commands[0]).toContain("nstat -az");
  });

  test("the probe of a timed-out request asks the guest's connection tracking and sockets, and the host's socket, for its port", async () => {
    const commands: string[] = [];
    const vm = {
      ssh: async (command: string) => {
        commands.push(command);
        return { code: 0, stdout: "ipv4     2 tcp      6 110 ESTABLISHED\nESTAB 0  0\n", stderr: "" };
      },
    };
    const seen = await vmProbe(vm)(40123);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toContain("grep -h -E '(sport|dport)=40123 ' /proc/net/nf_conntrack");
    expect(commands[0]).toContain("ss -Htanoi '( sport = :40123 or dport = :40123 )'");
    expect(seen).toMatch(/^guest: ipv4 2 tcp 6 110 ESTABLISHED \| ESTAB 0 0; host: /);
  });

  test("a guest that cannot be reached: its error, not a throw", async () => {
    const vm = { ssh: () => Promise.reject(new Error("ssh: connect to host 127.0.0.1 port 2222: Connection refused")) };
    expect(await guestEvidence(vm, { startedAt: 0, durationMs: 0 })).toContain("Connection refused");
  });
});
