// The probes' pools (origin-pool.ts) swap undici's 2,048-slot queue for a plain array by undici's
// internal symbol: these tests fail when an undici update moves that queue, and show the swapped
// queue still does a queue's work (requests wait for a connection, in order; destroy fails them).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, errors, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OriginPool, originPool } from '../src/origin-pool';

let server: Server;
let origin: string;
/** Requests the server has, not answered yet: the test answers them. */
const held: Array<{ path: string; answer: () => void }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    held.push({ path: req.url ?? '', answer: () => res.end(req.url) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 5));
};

describe('the probes’ origin pool', () => {
  it('has the plain queue, not undici’s (an undici update that moves it fails here)', async () => {
    const pool = new OriginPool(origin);
    try {
      expect(pool.leanQueue).toBe(true);
    } finally {
      await pool.destroy();
    }
  });

  it('queues requests beyond its connections and answers them in order', async () => {
    // One connection: the second and third request wait in the queue until the first is answered.
    const pool = new OriginPool(origin, { connections: 1 });
    try {
      const answers = ['/a', '/b', '/c'].map((path) =>
        pool.request({ method: 'GET', path }).then((r) => r.body.text()),
      );
      for (const path of ['/a', '/b', '/c']) {
        await until(() => held.length === 1);
        expect(held[0]!.path).toBe(path);
        held.shift()!.answer();
      }
      expect(await Promise.all(answers)).toEqual(['/a', '/b', '/c']);
    } finally {
      await pool.destroy();
    }
  });

  it('fails what still waits when destroyed', async () => {
    const pool = new OriginPool(origin, { connections: 1 });
    const failure = (path: string) =>
      pool.request({ method: 'GET', path }).then(
        () => 'answered',
        (err) => err,
      );
    const first = failure('/first');
    const waiting = failure('/waiting');
    await until(() => held.length === 1);
    await pool.destroy();
    held.length = 0;
    expect(await first).toBeInstanceOf(errors.UndiciError);
    expect(await waiting).toBeInstanceOf(errors.UndiciError);
  });

  it('is what an Agent made with its factory dispatches through', async () => {
    const made: unknown[] = [];
    const agent = new Agent({
      factory: (o, opts) => {
        const pool = originPool(o, opts);
        made.push(pool);
        return pool;
      },
    });
    try {
      const answer = request(`${origin}/via-agent`, { dispatcher: agent }).then((r) => r.body.text());
      await until(() => held.length === 1);
      held.shift()!.answer();
      expect(await answer).toBe('/via-agent');
      expect(made).toHaveLength(1);
      expect((made[0] as OriginPool).leanQueue).toBe(true);
    } finally {
      await agent.destroy();
    }
  });
});
