// One command through a test gateway's admin token, from inside workerd (no Valkey client
// here): bulk replies base64-decoded to bytes, as Upstash-Encoding sends them.
export function gatewayAdmin(gw: { url: string; admin: string }) {
  return async function admin(...args: string[]): Promise<unknown> {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${gw.admin}`, 'Upstash-Encoding': 'base64' },
      body: JSON.stringify(args),
    });
    const body = (await res.json()) as { result?: unknown; error?: string };
    if (body.error) throw new Error(body.error);
    const decode = (v: unknown): unknown =>
      typeof v === 'string' ? (v === 'OK' ? v : Uint8Array.from(atob(v), (c) => c.charCodeAt(0))) : Array.isArray(v) ? v.map(decode) : v;
    return decode(body.result);
  };
}
