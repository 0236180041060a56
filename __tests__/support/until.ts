/**
 * Waits until `check` holds, asking every 50 ms, for at most `timeoutMs`; past it, fails naming `what`. Every wait of
 * a test is bounded.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
