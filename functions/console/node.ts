// `emq console` (and `npm start`'s console): the console app (app.tsx) on a Node server with
// its caps and timeouts (EMQ_CONSOLE_*: functions/http/limits.ts), on 127.0.0.1 by default.
// Its configuration (config.ts) is read whole before it listens. Node only.
import { listen } from '../http/listen.js';
import { createConsoleApp } from './app.js';
import { consoleConfigFrom } from './config.js';
import { fetchListener } from './node-listener.js';

export interface RunningConsole {
  url: string;
  stop(): Promise<void>;
}

export async function startConsole(env: Record<string, string | undefined> = process.env): Promise<RunningConsole> {
  const { producerUrl, host, port, limits, sources } = consoleConfigFrom(env);
  const app = createConsoleApp({ producerUrl, sources });
  const { server, url } = await listen({ listener: fetchListener(app.fetch), host, port, limits });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
