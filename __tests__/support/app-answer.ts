/** The app's answer on a loopback port, as a client sees it (the ops tests' and the telemetry test's eyes). */
import { get } from "http";

/** The app's answer on `port` (undefined when nothing answers within 3 s). */
export function answer(port: number): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = get({ host: "127.0.0.1", port, path: "/", timeout: 3000 }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
  });
}

/** Waits (bounded) until the app answers with `body`; false when it did not within `timeoutMs`. */
export async function answersWith(port: number, body: string, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await answer(port))?.body === body) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}
