// A user's Node script: the package's REST connection, enqueueing through the gateway. On
// Node the package's entry sends through undici, so fetch here refuses to be used.
import { connectRest, enqueue, mintId } from 'echomq-edge';

globalThis.fetch = () => Promise.reject(new Error('the REST connection used fetch on Node'));
const rest = connectRest({ url: process.env.EMQ_REST_URL!, token: process.env.EMQ_REST_TOKEN! });
const id = mintId();
const verdict = await enqueue(rest, process.env.QUEUE!, id, new Uint8Array([0x00, 0xfe]));
await rest.close();
console.log(JSON.stringify({ id, verdict }));
