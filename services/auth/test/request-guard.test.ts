// The one copy of the browser-facing rules control and the dashboard share: cross-site writes, the
// Host allowlist against DNS rebinding, MCP_FLEET_ALLOWED_HOSTS and the loopback rule for binds.
// Both header shapes (fetch's Headers, node:http's object) go through the same rules.
import { describe, expect, it } from 'vitest';
import { AuthConfigError } from '../src';
import {
  crossSiteRefusal,
  hostRefusal,
  isLoopbackHost,
  isWrite,
  parseAllowedHosts,
  requestRefusal,
} from '../src/request-guard';

const both = (h: Record<string, string>) => [h, new Headers(h)];

describe('cross-site writes', () => {
  it('admits a same-origin browser and a client that is no browser', () => {
    for (const headers of [
      ...both({ host: '127.0.0.1:7070', origin: 'http://127.0.0.1:7070' }),
      ...both({ host: '127.0.0.1:7070', origin: 'http://127.0.0.1:7070', 'sec-fetch-site': 'same-origin' }),
      ...both({ host: 'localhost:3000', 'sec-fetch-site': 'none' }),
      ...both({ host: 'example.com', origin: 'https://example.com' }), // default port on both sides
      ...both({ host: 'example.com:443', origin: 'https://example.com' }),
      ...both({ host: '[::1]:7070', origin: 'http://[::1]:7070' }),
      ...both({ host: 'Control.Example:7070', origin: 'http://control.example:7070' }),
      ...both({ host: '127.0.0.1:7070' }), // curl, the CLI, a server-side fetch
    ])
      expect(crossSiteRefusal(headers), JSON.stringify(headers)).toBeNull();
  });

  it('refuses another site, a sibling site, another port, null and malformed origins', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ host: '127.0.0.1:7070', origin: 'https://evil.example' }, /not this server's own/],
      [{ host: '127.0.0.1:7070', origin: 'http://127.0.0.1:3000' }, /not this server's own/],
      [{ host: '127.0.0.1:7070', origin: 'http://127.0.0.2:7070' }, /not this server's own/],
      [{ host: '127.0.0.1:7070', origin: 'http://127.0.0.1.evil.example:7070' }, /not this server's own/],
      [{ host: 'example.com', origin: 'http://example.com:8080' }, /not this server's own/],
      [{ host: '127.0.0.1:7070', 'sec-fetch-site': 'cross-site' }, /cross-site request/],
      [{ host: '127.0.0.1:7070', 'sec-fetch-site': 'same-site', origin: 'http://127.0.0.1:7070' }, /same-site/],
      [{ host: '127.0.0.1:7070', 'sec-fetch-site': 'weird' }, /weird request/],
      [{ host: '127.0.0.1:7070', origin: 'null' }, /Origin null/],
      [{ host: '127.0.0.1:7070', origin: 'not a url' }, /malformed/],
      [{ host: '127.0.0.1:7070', origin: 'http://127.0.0.1:7070/' }, /malformed/],
      [{ host: '127.0.0.1:7070', origin: 'http://127.0.0.1:7070, http://127.0.0.1:7070' }, /malformed/],
      [{ host: '127.0.0.1:7070', origin: 'http://user@127.0.0.1:7070' }, /malformed/],
      [{ origin: 'http://127.0.0.1:7070' }, /not this server's own/], // no Host to be
      [{ host: 'evil.example@127.0.0.1:7070', origin: 'http://127.0.0.1:7070' }, /not this server's own/],
    ];
    for (const [h, message] of cases)
      for (const headers of both(h)) expect(crossSiteRefusal(headers), JSON.stringify(h)).toMatch(message);
  });

  it('takes X-Forwarded-Host only when asked (the dashboard behind a proxy)', () => {
    const h = new Headers({
      host: 'web:3000',
      'x-forwarded-host': 'fleet.example.com',
      origin: 'https://fleet.example.com',
    });
    expect(crossSiteRefusal(h)).toMatch(/not this server's own/);
    expect(crossSiteRefusal(h, { forwardedHost: true })).toBeNull();
  });

  it('counts every method but GET, HEAD and OPTIONS as a write', () => {
    expect(['GET', 'HEAD', 'OPTIONS'].map(isWrite)).toEqual([false, false, false]);
    expect(['POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND'].map(isWrite)).toEqual([true, true, true, true, true]);
  });
});

describe('the Host allowlist (DNS rebinding)', () => {
  it('serves loopback names, IP literals and listed names; refuses other names and malformed Hosts', () => {
    const allowed = ['control', 'fleet.internal.example'];
    for (const host of [
      '127.0.0.1:7070',
      'localhost',
      'localhost:3000',
      'app.localhost:3000',
      'LOCALHOST',
      '[::1]:7070',
      '10.1.2.3:7070',
      '192.0.2.1',
      '[2001:db8::1]:443',
      'control:7070',
      'Control',
      'fleet.internal.example.',
    ])
      expect(hostRefusal({ host }, allowed), host).toBeNull();
    for (const host of [
      'rebound.attacker.example:7070',
      'attacker.example',
      'control.attacker.example',
      'localhost.attacker.example',
      '127.0.0.1.attacker.example',
      '',
      'a b',
      'evil.example@127.0.0.1',
      '127.0.0.1:7070/x',
      '999.1.1.1',
      '[::1',
    ])
      expect(hostRefusal(new Headers({ host }), allowed), host).toMatch(/Host/);
    // HTTP/1.0 without Host: no browser.
    expect(hostRefusal({}, [])).toBeNull();
  });

  it('applies with auth off whatever the bind, keeps the probes open, and leaves auth-on alone', () => {
    const rebound = { host: 'rebound.attacker.example:7070' };
    const off = { authEnabled: false, allowedHosts: [] };
    expect(requestRefusal({ method: 'GET', path: '/api/servers', headers: rebound }, off)).toMatch(
      /not a loopback name/,
    );
    expect(requestRefusal({ method: 'GET', path: '/healthz', headers: rebound }, off)).toBeNull();
    expect(requestRefusal({ method: 'GET', path: '/readyz', headers: rebound }, off)).toBeNull();
    expect(
      requestRefusal({ method: 'GET', path: '/api/servers', headers: rebound }, { ...off, authEnabled: true }),
    ).toBeNull();
    // A cross-site write is refused with auth on and off.
    const cross = { host: '127.0.0.1:7070', origin: 'https://evil.example' };
    for (const authEnabled of [false, true]) {
      expect(requestRefusal({ method: 'POST', path: '/api/fleet', headers: cross }, { ...off, authEnabled })).toMatch(
        /not this server's own/,
      );
      expect(requestRefusal({ method: 'GET', path: '/api/fleet', headers: cross }, { ...off, authEnabled })).toBeNull();
    }
  });

  it('reads MCP_FLEET_ALLOWED_HOSTS and refuses what is not a name, naming the entry', () => {
    expect(parseAllowedHosts(undefined)).toEqual([]);
    expect(parseAllowedHosts(' control, Web , fleet.example.com., ')).toEqual(['control', 'web', 'fleet.example.com']);
    for (const bad of [
      '*',
      '*.example.com',
      'http://control',
      'control:7070',
      'a/b',
      '10.0.0.1',
      '[::1]',
      'a b',
      '-x',
      'x.123',
    ])
      expect(() => parseAllowedHosts(`control,${bad}`), bad).toThrow(
        /MCP_FLEET_ALLOWED_HOSTS entry 2 .*is not a host name/,
      );
    expect(() => parseAllowedHosts('*')).toThrow(AuthConfigError);
  });
});

describe('loopback addresses', () => {
  it('knows a loopback bind address or name from any other, in every spelling', () => {
    for (const h of [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      'localhost',
      'a.localhost',
      'localhost.',
    ])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '192.168.1.2',
      'example.com',
      '::ffff:10.0.0.1',
      'localhost.example',
      '::2',
    ])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});
