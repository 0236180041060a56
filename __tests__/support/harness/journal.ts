/**
 * The provisioning harness's journal: a real journal file, which the journalctl stand-in
 * (stand-ins/bin/journalctl.sh) reads, written as journald writes it, through systemd-journal-remote.
 */
import { mkdirSync } from "fs";
import { join } from "path";
import { mustExec } from "./shared";

/** systemd-journal-remote, which writes the harness's journal file (Debian's systemd-journal-remote package). */
export const JOURNAL_REMOTE = "/usr/lib/systemd/systemd-journal-remote";

export class Journal {
  /** The journal file (created by the first append). */
  readonly file: string;

  /** `dir`: the harness's directory, which holds `journal/system.journal`. */
  constructor(dir: string) {
    this.file = join(dir, "journal", "system.journal");
  }

  /** Appends each message (one line) from `unit`, one microsecond apart from now on. */
  async append(unit: string, messages: readonly string[]): Promise<void> {
    mkdirSync(join(this.file, ".."), { recursive: true });
    const start = Date.now() * 1000;
    const entries = messages.map((message, i) => {
      if (/[\n\r]/.test(message)) throw new Error("appendJournal: one line per message");
      return `__REALTIME_TIMESTAMP=${start + i}\n__MONOTONIC_TIMESTAMP=${start + i}\n_BOOT_ID=${"0".repeat(32)}\n_SYSTEMD_UNIT=${unit}\nMESSAGE=${message}\n\n`;
    });
    await mustExec(JOURNAL_REMOTE, [`--output=${this.file}`, "-"], { input: entries.join("") });
  }
}
