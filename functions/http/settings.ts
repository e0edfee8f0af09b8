// Numbers and switches read from the environment at start. A bad value stops the process
// with a message naming the variable, never its value: a secret pasted into the wrong
// variable must not reach a log.
export type Vars = Record<string, string | undefined>;

/** A whole number from `min` to `max`, or `fallback` when the variable is unset or empty. */
export function wholeNumber(vars: Vars, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const text = vars[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${name} is not a whole number from ${min} to ${max}`);
  }
  return n;
}

/** A switch: 1 on, 0 (or unset, or empty) off; anything else stops the start. */
export function onOff(vars: Vars, name: string): boolean {
  const text = vars[name];
  if (text === undefined || text === '' || text === '0') return false;
  if (text === '1') return true;
  throw new Error(`${name} is not 1 (on) or 0 (off)`);
}
