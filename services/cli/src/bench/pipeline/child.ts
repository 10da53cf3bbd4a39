// A bench child process (forked by children.ts): `fleet <count>` serves the cheap fleet, `agent
// <namespace> [concurrency]` runs an agent. Both answer `stats` and end when the parent goes away.
import { startCheapFleet } from '@mcp-fleet/fleet-sim';
import { startBenchAgent } from './bench-agent';
import type { FromChild, ToChild } from './children';
import { startWindowProfile, type WindowProfile } from './profile';
import { scrapeEvery } from './scraper';

const [role, ...args] = process.argv.slice(2);
const send = (m: FromChild) => process.send?.(m);
// Ctrl-C reaches the whole process group: the parent decides when children stop (it still needs them to clean up).
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

if (role === 'fleet') {
  const fleet = await startCheapFleet({ count: Number(args[0]) });
  let scraper: ReturnType<typeof scrapeEvery> | undefined;
  process.on('message', (m: ToChild) => {
    if (m.type === 'stats') send({ type: 'stats', requests: fleet.requests() });
    else if (m.type === 'scrape-stop') scraper?.stop();
    else if (m.type === 'scrape-start') {
      scraper?.stop();
      scraper = scrapeEvery(m.url, m.everyS, (e) =>
        process.stderr.write(`  a scrape of control's /metrics failed: ${e}\n`),
      );
    } else if (m.type === 'scrapes') send({ type: 'scrapes', scrapes: scraper?.scrapes() ?? [] });
  });
  // The parent going away (even killed) ends the fleet.
  process.on('disconnect', () => {
    scraper?.stop();
    void fleet.close().then(() => process.exit(0));
  });
  send({ type: 'ready', urls: fleet.urls });
} else {
  const [namespace, concurrency] = args;
  const agent = await startBenchAgent(namespace!, concurrency ? Number(concurrency) : undefined);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= agent.stop().catch(() => {});
    return stopping;
  };
  let profile: WindowProfile | undefined;
  process.on('message', async (m: ToChild) => {
    if (m.type === 'stats') send({ type: 'stats', ...agent.stats() });
    else if (m.type === 'profile-start') {
      profile = await startWindowProfile();
      send({ type: 'profiling' });
    } else if (m.type === 'profile-stop') {
      await profile?.stop(m.file);
      send({ type: 'profiled' });
    } else void stop().then(() => send({ type: 'stopped' }));
  });
  process.on('disconnect', () => void stop().then(() => process.exit(0)));
  send({ type: 'ready' });
}
