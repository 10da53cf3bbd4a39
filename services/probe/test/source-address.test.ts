// A guarded dispatcher with a local address connects from it (an agent's --source-address), and
// refuses to be made with anything that is no IP address.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { guardedDispatcher, TargetPolicy } from '../src';

const policy = new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [] });

describe('a guarded dispatcher with a local address', () => {
  it('connects from it', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.socket.remoteAddress ?? '');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const from2 = guardedDispatcher(policy, undefined, { localAddress: '127.0.0.2' });
    const plain = guardedDispatcher(policy);
    try {
      for (const dispatcher of [from2, plain]) {
        const res = await request(`http://127.0.0.1:${port}/`, { dispatcher });
        await res.body.text();
      }
      expect(seen.map((a) => a.replace(/^::ffff:/, ''))).toEqual(['127.0.0.2', '127.0.0.1']);
    } finally {
      await Promise.all([from2.destroy(), plain.destroy()]);
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is an IP address, or the dispatcher is not made', () => {
    for (const bad of ['localhost', '127.0.0.0/8', '127.0.0.2:80', ''])
      expect(() => guardedDispatcher(policy, undefined, { localAddress: bad })).toThrow(
        /source address: an IP address/,
      );
  });
});
