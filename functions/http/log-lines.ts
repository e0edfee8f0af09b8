// Log lines to stdout on Node: the lines of one turn of the event loop go out in one write
// (a write to a pipe is synchronous on Linux: one per request would be a syscall each), and
// whatever is pending goes out before the process exits. Node only.
let pending: string[] = [];
let scheduled = false;
let hooked = false;

function flush(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const text = `${pending.join('\n')}\n`;
  pending = [];
  process.stdout.write(text);
}

/** Queues a line (no newline) for stdout. */
export function writeLine(line: string): void {
  pending.push(line);
  if (!hooked) {
    hooked = true;
    process.once('exit', flush);
  }
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

/** Writes what is pending now (at stop). */
export function flushLines(): void {
  flush();
}
