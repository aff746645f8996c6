import { Agent, request } from 'node:http';

export interface PingReport {
  ok: number;
  /** Every ping that did not end in a 200 pong: the error code or the status. */
  failures: string[];
  /** Milliseconds, one per answered ping. */
  latencies: number[];
  /** Responses that carried Connection: close (a draining worker letting go of a keep-alive connection). */
  closes: number;
}

export interface PingerOptions {
  url: string;
  apiKey: string;
  clients: number;
  intervalMs: number;
  /** Clients reuse their connection between pings (Node's keep-alive agent). */
  keepAlive: boolean;
}

/** Clients that ping the service every `intervalMs` until `stop()`, which resolves with what they saw. */
export function startPingers(options: PingerOptions): { stop(): Promise<PingReport> } {
  const report: PingReport = { ok: 0, failures: [], latencies: [], closes: 0 };
  let running = true;
  const agents: Agent[] = [];
  const loops = Array.from({ length: options.clients }, async () => {
    const agent = options.keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : undefined;
    if (agent) agents.push(agent);
    while (running) {
      const started = performance.now();
      const outcome = await ping(options, agent);
      // Latency of answered pings only: a refused connection fails in no time and would flatter.
      if (outcome.result === 'ok') report.latencies.push(performance.now() - started);
      if (outcome.closed) report.closes += 1;
      if (outcome.result === 'ok') report.ok += 1;
      else report.failures.push(outcome.result);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      for (const agent of agents) agent.destroy();
      return report;
    },
  };
}

function ping(
  options: PingerOptions,
  agent: Agent | undefined,
): Promise<{ result: string; closed: boolean }> {
  return new Promise((resolve) => {
    const req = request(
      `${options.url}/rest/system/ping`,
      { headers: { 'x-api-key': options.apiKey }, agent: agent ?? false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ result: error.code ?? error.message, closed: false }),
        );
        response.on('end', () => {
          const closed = response.headers.connection === 'close';
          const good = response.statusCode === 200 && isPong(body);
          resolve({
            result: good ? 'ok' : `status ${response.statusCode}: ${body.replace(/\s+/g, ' ').slice(0, 80)}`,
            closed,
          });
        });
      },
    );
    req.setTimeout(10_000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ result: error.code ?? error.message, closed: false }),
    );
    req.end();
  });
}

// Any JSON spelling of the pong counts: Syncthing indents its answers.
function isPong(body: string): boolean {
  try {
    return (JSON.parse(body) as { ping?: unknown }).ping === 'pong';
  } catch {
    return false;
  }
}
