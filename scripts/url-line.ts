// A server's first stdout line is its URL. When its stdout goes to a file (the bench: request
// logs written to a file, as a service manager would keep them, not into a pipe someone must
// drain), the URL is read back from the file's start.
import { openSync, readSync, closeSync } from 'node:fs';

const POLL_MS = 20;

/** The file's first line once it is a URL; rejects when `exited` settles first or after `timeoutMs`. */
export function urlLineOf(file: string, exited: Promise<unknown>, timeoutMs: number, why: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      f();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`did not print its URL within ${timeoutMs} ms: ${why()}`))), timeoutMs);
    void exited.then((code) => finish(() => reject(new Error(`exited (${String(code)}) before it printed its URL: ${why()}`))));
    const head = Buffer.alloc(4096);
    const poll = () => {
      if (done) return;
      const fd = openSync(file, 'r');
      const n = readSync(fd, head, 0, head.length, 0);
      closeSync(fd);
      const line = /^(https?:\/\/\S+)\n/.exec(head.subarray(0, n).toString('utf8'));
      if (line) finish(() => resolve(line[1]!));
      else setTimeout(poll, POLL_MS);
    };
    poll();
  });
}
