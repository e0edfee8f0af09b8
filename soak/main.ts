// npm run soak: SOAK_SECONDS (default 300), SOAK_PRODUCERS (32), SOAK_FAULTS_EACH (6), SOAK_CONSUMERS (4),
// SOAK_MODE (worker: the Worker and the gateway, the default; glide: `emq producer` over glide).
// Prints progress, the fault log and the table; exits 1 if any must is not met.
import { printTable, runSoak } from './run.js';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name}=${v} is not a positive whole number`);
  return n;
};

const mode = process.env.SOAK_MODE || 'worker';
if (mode !== 'worker' && mode !== 'glide') throw new Error(`SOAK_MODE=${mode} is neither worker nor glide`);

const result = await runSoak({
  mode,
  seconds: num('SOAK_SECONDS', 300),
  producers: num('SOAK_PRODUCERS', 32),
  faultsEach: num('SOAK_FAULTS_EACH', 6),
  consumers: num('SOAK_CONSUMERS', 4),
});
console.log(`\n${printTable(result)}\n`);
console.log(result.ok ? 'soak: every must is met' : 'soak: FAILED');
process.exit(result.ok ? 0 : 1);
