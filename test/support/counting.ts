// A connection that counts the calls crossing the seam: each run or pipeline is one round trip.
import type { Connection } from '../../shared/connection.js';

export function counting(conn: Connection) {
  const counts = { run: 0, pipeline: 0 };
  return {
    counts,
    run: (c: Parameters<Connection['run']>[0]) => (counts.run++, conn.run(c)),
    pipeline: (c: Parameters<Connection['pipeline']>[0]) => (counts.pipeline++, conn.pipeline(c)),
    close: () => conn.close(),
  };
}
