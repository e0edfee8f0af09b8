// A user's Worker: the runtime-agnostic package over the REST connection, bundled by wrangler
// from the installed tarball. POST /<queue> enqueues the body and answers the id and the
// verdict; anything else answers 200 (the test waits on it to know the Worker is up).
import { connectRest, enqueue, mintId } from 'echomq-edge';

interface Env {
  EMQ_REST_URL: string;
  EMQ_REST_TOKEN: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (request.method !== 'POST') return new Response('up');
    const queue = new URL(request.url).pathname.slice(1);
    const valkey = connectRest({ url: env.EMQ_REST_URL, token: env.EMQ_REST_TOKEN });
    const id = mintId();
    const verdict = await enqueue(valkey, queue, id, new Uint8Array(await request.arrayBuffer()));
    return Response.json({ id, verdict });
  },
};
