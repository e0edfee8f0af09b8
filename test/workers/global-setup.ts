// Node side of the "workers" project: servers for the workerd tests to call, their
// addresses handed over with provide() and read in workerd with inject() (keys typed in
// provided.d.ts): the real gateway process in front of the run's first Valkey server
// (`gateway`: its URL and its admin and producer tokens), and a tiny HTTP server on
// 127.0.0.1 that echoes the request body (and reports what it received as hex in a header,
// so a test can tell the request arrived intact independently of the response path); the
// same server answers GET /gateway-log with the gateway's request log lines.
// Also `mismatchedGateway`: another gateway process in front of a private Valkey whose
// {emq}:version holds a wire version other than ours (fence.test.ts).
//
// Listed in the ROOT `globalSetup` of vitest.config.ts, after test/global-setup.ts, not in
// the workers project's own `globalSetup`, on purpose:
//  - root global setups run after the per-project ones, so only here is `servers` (the
//    Valkey servers test/global-setup.ts starts) already provided:
//    project.getProvidedContext().servers;
//  - a workers-project global setup is loaded through that project's Vite runner, which
//    @cloudflare/vitest-pool-workers sets up for workerd (resolve conditions workerd/worker/
//    browser instead of node, every dependency inlined): ioredis and @valkey/valkey-glide
//    fail to load there. Here it is plain Node resolution.
// Everything provided at the root reaches every project, workerd included.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { startServer } from '../../scripts/valkey.js';
import { connectAdmin } from '../support/admin.js';
import { startGatewayProcess } from '../support/gateway.js';

export default async function setup(project: TestProject) {
  // `--project node` leaves the workers project out of the run: nothing to start for it.
  if (!project.vitest.projects.some((p) => p.name === 'workers')) return;

  let gateway: Awaited<ReturnType<typeof startGatewayProcess>> | undefined;
  const server = createServer((req, res) => {
    if (req.url === '/gateway-log') {
      // the gateway's request log lines, for a workerd test to find its request id in
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(gateway?.stdout() ?? '');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': body.length,
        'x-received-hex': body.toString('hex'),
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  project.provide('echoUrl', `http://127.0.0.1:${port}/echo`);
  project.provide('gatewayLogUrl', `http://127.0.0.1:${port}/gateway-log`);

  const valkey = project.getProvidedContext().servers[0]!;
  gateway = await startGatewayProcess(valkey.url);
  project.provide('gateway', { url: gateway.url, admin: gateway.admin, producer: gateway.producer });

  // a server of its own, since the key would lock every other suite's writes out
  const fenced = await startServer();
  const admin = await connectAdmin(fenced.url);
  await admin.call('SET', '{emq}:version', 'echomq:2.0.0');
  admin.close();
  const mismatched = await startGatewayProcess(fenced.url);
  project.provide('mismatchedGateway', { url: mismatched.url, admin: mismatched.admin, producer: mismatched.producer });
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const codes = [await gateway!.stop(), await mismatched.stop()];
    await fenced.stop();
    if (codes.some((c) => c !== 0)) throw new Error(`a gateway exited with ${codes}: ${gateway!.stderr()} ${mismatched.stderr()}`);
  };
}
