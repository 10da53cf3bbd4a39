// Bounded DNS lookups: real probes through a real guarded dispatcher, to a real fleet-sim target on
// loopback; only the system resolver is a test double (the machine's own cannot be made to stall).
// A stalling name times out with a clear message while other names' probes complete, one name
// holds one slot however many probes ask for it, and the process-wide cap holds.
import type { LookupAddress } from 'node:dns';
import { afterAll, describe, expect, it } from 'vitest';
import { DnsLookups, guardedDispatcher, handshake, type Resolver, TargetPolicy } from '../src';
import { useSim } from './use-sim';

const fleet = useSim({ only: ['modern'] });
const policy = new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [] });

/**
 * (Names under .localhost: the loopback guard lets only local names be looked up at all.)
 * A resolver that answers `*.good.localhost` with 127.0.0.1 at once and never answers `*.stall.localhost`
 * until released (as getaddrinfo behind a stalled DNS server), counting what it is asked.
 */
class StallingResolver {
  readonly asked: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** The most lookups of one name in flight at once. */
  maxOfOneName = 0;
  readonly #ofName = new Map<string, number>();
  readonly #stalled: (() => void)[] = [];

  readonly resolve: Resolver = (hostname, _options, callback) => {
    this.asked.push(hostname);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.#ofName.set(hostname, (this.#ofName.get(hostname) ?? 0) + 1);
    this.maxOfOneName = Math.max(this.maxOfOneName, this.#ofName.get(hostname)!);
    const answer = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      this.inFlight -= 1;
      this.#ofName.set(hostname, this.#ofName.get(hostname)! - 1);
      callback(err, addresses);
    };
    if (hostname.endsWith('.stall.localhost'))
      this.#stalled.push(() =>
        answer(Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN' }), []),
      );
    else setTimeout(() => answer(null, [{ address: '127.0.0.1', family: 4 }]), 20);
  };

  /** The system resolver gives up at last: every stalled lookup returns. */
  release(): void {
    for (const answer of this.#stalled.splice(0)) answer();
  }
}

/** The modern target's URL under another host name. */
const urlAt = (host: string) => {
  const url = new URL(fleet().target('modern').url);
  url.hostname = host;
  return url.href;
};

const dispatchers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.close()));
});

function setup(limits: { timeoutMs: number; maxConcurrent: number }) {
  const resolver = new StallingResolver();
  const dns = new DnsLookups(limits, resolver.resolve);
  const dispatcher = guardedDispatcher(policy, dns);
  dispatchers.push(dispatcher);
  const probe = (host: string) => handshake(urlAt(host), { revision: '2026-07-28', timeoutMs: 20_000, dispatcher });
  return { resolver, dns, probe };
}

describe('bounded DNS lookups', () => {
  it('a stalling name times out with a clear message, and does not stop other names’ probes', async () => {
    const { resolver, dns, probe } = setup({ timeoutMs: 500, maxConcurrent: 2 });
    // Twenty probes of a stalling name and twenty of healthy ones, side by side.
    const stalled = Array.from({ length: 20 }, () => probe('api.stall.localhost'));
    const healthy = Array.from({ length: 20 }, (_, i) => probe(`s${i % 4}.good.localhost`));
    const [stalledRuns, healthyRuns] = await Promise.all([Promise.all(stalled), Promise.all(healthy)]);

    for (const run of healthyRuns) expect(run).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });
    for (const run of stalledRuns) {
      expect(run.outcome).toBe('unreachable');
      expect(run.message).toBe('DNS lookup for api.stall.localhost did not answer within 500 ms');
      expect(run.evidence).toMatchObject({ status: null, reachabilityFailure: 'dns' });
    }
    // One lookup for the stalling name, however many probes asked: it holds one slot of two.
    expect(resolver.asked.filter((h) => h === 'api.stall.localhost')).toHaveLength(1);
    expect(resolver.maxInFlight).toBeLessThanOrEqual(2);
    expect(resolver.maxOfOneName).toBe(1);
    // It still holds its slot (its thread) until the resolver returns; then it frees it.
    expect(dns.running).toBe(1);
    resolver.release();
    expect(dns.running).toBe(0);
  });

  it('the process-wide cap holds: lookups past it wait, and say so when their time runs out', async () => {
    const { resolver, dns, probe } = setup({ timeoutMs: 500, maxConcurrent: 2 });
    // Two stalling names take both slots; a third and a healthy name wait for one.
    const runs = await Promise.all([
      probe('a.stall.localhost'),
      probe('b.stall.localhost'),
      probe('c.stall.localhost'),
      probe('late.good.localhost'),
    ]);
    expect(resolver.maxInFlight).toBe(2);
    expect(resolver.asked.sort()).toEqual(['a.stall.localhost', 'b.stall.localhost']);
    for (const run of runs) expect(run.outcome).toBe('unreachable');
    expect(runs[0]!.message).toMatch(/DNS lookup for a\.stall\.localhost did not answer within 500 ms$/);
    expect(runs[3]!.message).toBe(
      'DNS lookup for late.good.localhost did not answer within 500 ms (it waited for one of the 2 lookups this process runs at once)',
    );
    expect(dns.running).toBe(2);
    // Once the resolver gives the threads back, the next probes resolve and succeed.
    resolver.release();
    expect(dns.running).toBe(0);
    expect(await probe('late.good.localhost')).toMatchObject({ outcome: 'success' });
    expect(resolver.maxInFlight).toBe(2);
  });

  it('a name has one lookup in flight, shared by every probe asking for it meanwhile', async () => {
    const { resolver, probe } = setup({ timeoutMs: 2_000, maxConcurrent: 3 });
    const runs = await Promise.all(Array.from({ length: 10 }, () => probe('shared.good.localhost')));
    for (const run of runs) expect(run.outcome).toBe('success');
    // Ten probes open connections at once; their lookups of the name were one (or a few, if a
    // connection opened after the answer came), never two at a time.
    expect(resolver.maxOfOneName).toBe(1);
    expect(resolver.asked.length).toBeLessThan(10);
  });
});
