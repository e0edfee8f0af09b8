// functions/http/log-lines.ts: log lines to stdout, the lines of one turn of the event loop in one
// write (each ended by a newline), and flushLines() writing what is pending at once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushLines, writeLine } from '../functions/http/log-lines.js';

const turn = () => new Promise((r) => setImmediate(r));

/** The texts written to stdout that carry this test's marker (vitest may write there too). */
function spyStdout(marker: string) {
  const writes: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    if (String(chunk).includes(marker)) writes.push(String(chunk));
    return true;
  });
  return { writes, spy };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('writeLine', () => {
  it('writes nothing at once, then the lines of one turn as one write, each ended by a newline', async () => {
    const { writes } = spyStdout('@turn');
    writeLine('{"a":1,"m":"@turn"}');
    writeLine('{"b":2,"m":"@turn"}');
    writeLine('{"c":3,"m":"@turn"}');
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['{"a":1,"m":"@turn"}\n{"b":2,"m":"@turn"}\n{"c":3,"m":"@turn"}\n']);
  });

  it('writes a later turn separately, and nothing is written twice', async () => {
    const { writes } = spyStdout('@later');
    writeLine('one @later');
    await turn();
    writeLine('two @later');
    await turn();
    await turn();
    expect(writes).toEqual(['one @later\n', 'two @later\n']);
  });
});

describe('flushLines', () => {
  it('writes what is pending at once, and the scheduled write then has nothing left', async () => {
    const { writes, spy } = spyStdout('@flush');
    writeLine('x @flush');
    writeLine('y @flush');
    flushLines();
    expect(writes).toEqual(['x @flush\ny @flush\n']);
    await turn();
    expect(writes).toHaveLength(1);
    const calls = spy.mock.calls.length;
    flushLines();
    expect(spy.mock.calls.length).toBe(calls); // nothing pending: no write at all
  });

  it('does not lose a line queued after a flush in the same turn', async () => {
    const { writes } = spyStdout('@after');
    writeLine('first @after');
    flushLines();
    writeLine('second @after');
    await turn();
    expect(writes).toEqual(['first @after\n', 'second @after\n']);
  });
});
