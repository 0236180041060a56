/**
 * reservedPort (harness/shared.ts): the app's port in the provisioning harness, which the app leaves at each
 * restart, is one that nobody else is handed meanwhile: not the kernel's listen(0) or connect() (it lies below
 * the ephemeral range) and not another harness (it is held until released).
 */
import { readFileSync } from "fs";
import * as http from "http";
import { close, listen, reservedPort } from "../../support/harness/shared";

const ephemeralFrom = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);

afterEach(() => jest.restoreAllMocks());

it("hands out a port below the kernel's ephemeral range, which a server can then listen on", async () => {
  const reserved = await reservedPort();
  try {
    expect(reserved.port).toBeLessThan(ephemeralFrom);
    const server = http.createServer();
    server.listen(reserved.port, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    await close(server);
  } finally {
    await reserved.release();
  }
});

it("never hands out a held port again, even when it is not listened on; once released, it is free for the next", async () => {
  // The same random start for every call: the second call meets the first one's port.
  jest.spyOn(Math, "random").mockReturnValue(0.5);
  const first = await reservedPort();
  const second = await reservedPort();
  expect(second.port).not.toBe(first.port);
  await first.release();
  const third = await reservedPort();
  expect(third.port).toBe(first.port);
  await Promise.all([second.release(), third.release()]);
});

it("skips a port that a server outside the harness listens on", async () => {
  jest.spyOn(Math, "random").mockReturnValue(0.25);
  const probe = await reservedPort();
  await probe.release();
  const other = http.createServer();
  other.listen(probe.port, "127.0.0.1");
  await new Promise((resolve) => other.once("listening", resolve));
  try {
    const reserved = await reservedPort();
    expect(reserved.port).not.toBe(probe.port);
    await reserved.release();
  } finally {
    await close(other);
  }
});

it("is not what listen(0) gives: freePort's ports come from the ephemeral range", async () => {
  const server = http.createServer();
  const port = await listen(server);
  await close(server);
  expect(port).toBeGreaterThanOrEqual(ephemeralFrom);
});
