// The producer half's verdict, read from Valkey after the last fault: every acknowledged job present
// (row and pending entry) with its exact bytes, no job stored twice, no half-written job.
import type { GlideClient, GlideString } from '@valkey/valkey-glide';
import type { Ledger } from './producers.js';

export interface Findings {
  rows: number;
  /** Acknowledged, but the row or its pending entry is missing. */
  lost: number;
  /** Extra rows for one job (found by the unique tag in its payload). */
  doubled: number;
  rowsWithoutPending: number;
  pendingWithoutRow: number;
  notByteExact: number;
  /** Rows whose id no producer sent. */
  unknownRows: number;
  examples: string[];
}

const text = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : String(v));

async function inChunks<T, R>(items: readonly T[], each: (item: T) => Promise<R>, size = 1_000): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  return out;
}

async function rowKeys(admin: GlideClient, queue: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = (await admin.customCommand(['SCAN', cursor, 'MATCH', `emq:{${queue}}:job:*`, 'COUNT', '1000'])) as [GlideString, GlideString[]];
    cursor = text(next);
    keys.push(...batch.map(text));
  } while (cursor !== '0');
  return keys;
}

export async function readBack(admin: GlideClient, ledger: Ledger, queues: readonly string[]): Promise<Findings> {
  const f: Findings = { rows: 0, lost: 0, doubled: 0, rowsWithoutPending: 0, pendingWithoutRow: 0, notByteExact: 0, unknownRows: 0, examples: [] };
  const note = (line: string) => f.examples.length < 10 && f.examples.push(line);
  const stored = new Map<string, { payload: Buffer | null; pending: boolean }>();
  const tags = new Map<string, number>();

  for (const queue of queues) {
    const pendingKey = `emq:{${queue}}:pending`;
    const members = new Set(((await admin.customCommand(['ZRANGE', pendingKey, '0', '-1'])) as GlideString[]).map(text));
    const keys = await rowKeys(admin, queue);
    const prefix = `emq:{${queue}}:job:`;
    const payloads = await inChunks(keys, (k) => admin.customCommand(['HGET', k, 'payload']) as Promise<Buffer | null>);
    keys.forEach((key, i) => {
      const id = key.slice(prefix.length);
      const payload = payloads[i] ?? null;
      stored.set(id, { payload, pending: members.has(id) });
      f.rows++;
      if (!members.has(id)) f.rowsWithoutPending++, note(`row without pending entry: ${key}`);
      if (!ledgerHas(ledger, id, queue)) f.unknownRows++, note(`row no producer sent: ${key}`);
      if (payload) {
        const tag = payload.subarray(0, Math.max(0, payload.indexOf(0x7c))).toString('latin1');
        tags.set(tag, (tags.get(tag) ?? 0) + 1);
      }
    });
    for (const id of members) if (!stored.has(id)) f.pendingWithoutRow++, note(`pending entry without a row: ${queue} ${id}`);
  }
  for (const count of tags.values()) if (count > 1) f.doubled += count - 1;

  for (const [id, job] of ledger.jobs) {
    if (!job.acked) continue;
    const s = stored.get(id);
    if (!s?.pending || !s.payload) {
      f.lost++;
      note(`acknowledged but ${!s ? 'absent' : !s.pending ? 'not pending' : 'without payload'}: ${job.queue} ${id}`);
    } else if (!s.payload.equals(job.payload)) {
      f.notByteExact++;
      note(`payload changed: ${job.queue} ${id} (${job.payload.length} bytes sent, ${s.payload.length} stored)`);
    }
  }
  return f;
}

function ledgerHas(ledger: Ledger, id: string, queue: string): boolean {
  return ledger.jobs.get(id)?.queue === queue;
}
