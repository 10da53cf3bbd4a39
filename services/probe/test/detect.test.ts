// Detections against every sim target: what is supported, the evidence and sentences for what is
// not, the request bound counted on the server side, and credentials never echoed.
import { SIM_BEARER_TOKEN } from '@mcp-fleet/fleet-sim';
import { describe, expect, it } from 'vitest';
import { DETECTION_MAX_REQUESTS, detect, REVISION_NAMES } from '../src';
import { useSim } from './use-sim';

const fleet = useSim();

const supported = (d: Awaited<ReturnType<typeof detect>>) =>
  d.revisions.filter((r) => r.supported).map((r) => r.revision);

describe('detection of real SDK servers', () => {
  const sdkTargets = [
    'legacy-sse',
    'sessions-2025-03-26',
    'sessions-2025-06-18',
    'sessions-2025-11-25',
    'modern',
    'modern-only',
    'drifter',
  ];
  it.each(sdkTargets)('%s: every revision probed on its own, within 8 requests', async (name) => {
    const target = fleet().target(name);
    const d = await detect(target.url);
    expect(d.outcome).toBe('DETECTED');
    expect(supported(d)).toEqual(target.supports);
    expect(d.newestSupported).toBe(target.newest);
    expect(d.serverInfo?.name).toBe(name);
    expect(d.revisions.map((r) => r.revision)).toEqual(REVISION_NAMES);
    const served = fleet().requests(name).length;
    expect(served).toBe(d.requests);
    expect(served).toBeLessThanOrEqual(DETECTION_MAX_REQUESTS);
    for (const r of d.revisions) {
      if (r.supported) {
        expect(r.serverInfo?.name).toBe(name);
        expect(r.evidence).toBeUndefined();
      } else {
        expect(r.evidence).toBeDefined();
        expect(r.serverInfo).toBeUndefined();
      }
    }
  });

  it('a server that answers every legacy revision keeps to the bound and deletes the sessions it can', async () => {
    const d = await detect(fleet().target('sessions-2025-11-25').url);
    const seen = fleet().requests('sessions-2025-11-25');
    expect(d.requests).toBe(DETECTION_MAX_REQUESTS);
    expect(seen.filter((r) => r.method === 'DELETE').length).toBe(2);
  });

  // The sentences of a detection: docs/protocol.md#detection.
  it('says one sentence per revision, in the words of docs/protocol.md (detection)', async () => {
    const d = await detect(fleet().target('modern').url);
    const sentences = d.revisions.map((r) => r.sentence);
    expect(sentences).toContain('2026-07-28 (stateless): supported. This is the current protocol revision.');
    expect(sentences).toContain('2025-06-18 (sessions): supported. This is not the current revision.');
    expect(sentences).toContain('2024-11-05 (HTTP+SSE transport): not supported (HTTP 405, application/json).');
  });

  it('a sessions revision answered with another one is not supported, and says what came back', async () => {
    const d = await detect(fleet().target('sessions-2025-03-26').url);
    const r = d.revisions.find((x) => x.revision === '2025-11-25');
    expect(r?.supported).toBe(false);
    expect(r?.sentence).toBe('2025-11-25 (sessions): not supported (the server answered with 2025-03-26).');
    expect(r?.evidence).toMatchObject({ status: 200, contentType: expect.stringMatching(/event-stream/) });
  });

  it('the evidence of an unsupported revision: status, content type, first bytes, JSON-RPC error, time', async () => {
    const d = await detect(fleet().target('modern-only').url);
    const r = d.revisions.find((x) => x.revision === '2025-06-18');
    expect(r?.evidence).toMatchObject({
      status: 400,
      contentType: expect.stringMatching(/^application\/json/),
      jsonRpcErrorCode: -32022,
      jsonRpcErrorMessage: expect.stringMatching(/Unsupported protocol version/),
      reachabilityFailure: null,
    });
    expect(r?.evidence?.bodyPreview?.length).toBeLessThanOrEqual(200);
    expect(r?.evidence?.millis).toBeGreaterThanOrEqual(0);
    expect(r?.sentence).toBe('2025-06-18 (sessions): not supported (HTTP 400, application/json).');
  });
});

describe('detection of odd targets', () => {
  it('a plain website: NONE, with the HTML as evidence on every revision', async () => {
    const d = await detect(fleet().target('website').url);
    expect(d).toMatchObject({ outcome: 'NONE', newestSupported: null, serverInfo: null, retryAfterHeader: null });
    for (const r of d.revisions) expect(r.evidence?.contentType).toMatch(/text\/html/);
    expect(d.revisions[0]?.sentence).toBe('2024-11-05 (HTTP+SSE transport): not supported (HTTP 200, text/html).');
  });

  it('429 with Retry-After: RATE_LIMITED with the header value', async () => {
    const d = await detect(fleet().target('rate-limited').url);
    expect(d).toMatchObject({ outcome: 'RATE_LIMITED', retryAfterHeader: '30', newestSupported: null });
    expect(d.revisions.every((r) => r.evidence?.status === 429)).toBe(true);
  });

  it('503: NONE, every revision with its status', async () => {
    const d = await detect(fleet().target('unavailable').url);
    expect(d.outcome).toBe('NONE');
    expect(d.revisions.every((r) => r.sentence.endsWith('(HTTP 503, text/html).'))).toBe(true);
  });

  it('a server that never answers: NONE within the timeout, each revision a timeout', async () => {
    const d = await detect(fleet().target('silent').url, { timeoutMs: 1_000 });
    expect(d.outcome).toBe('NONE');
    expect(d.millis).toBeLessThan(5_000);
    for (const r of d.revisions) {
      expect(r.evidence).toMatchObject({ status: null, reachabilityFailure: 'timeout' });
      expect(r.sentence).toMatch(/not supported \(no answer within \d+ ms\)\.$/);
    }
  });

  it('a closed port: NONE, each revision a refused connection', async () => {
    const d = await detect(fleet().target('closed').url);
    expect(d.outcome).toBe('NONE');
    for (const r of d.revisions) expect(r.evidence?.reachabilityFailure).toBe('connection_refused');
    expect(d.revisions[4]?.sentence).toBe('2026-07-28 (stateless): not supported (connection refused).');
  });

  it('an SSE stream that never sends endpoint, and one that sends it after 3 s: not supported', async () => {
    for (const name of ['sse-no-endpoint', 'sse-slow-endpoint']) {
      const d = await detect(fleet().target(name).url);
      const sse = d.revisions[0];
      expect(sse?.supported).toBe(false);
      expect(sse?.sentence).toBe('2024-11-05 (HTTP+SSE transport): not supported (no endpoint event within 2 s).');
      expect(d.millis).toBeLessThan(4_000);
    }
  });
});

describe('credentials', () => {
  it('are sent, and a supported server is detected with them', async () => {
    const d = await detect(fleet().target('bearer').url, { headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` } });
    expect(d.outcome).toBe('DETECTED');
    expect(
      fleet()
        .requests('bearer')
        .every((r) => r.hasAuthorization),
    ).toBe(true);
  });

  it('never appear in evidence, messages or output, even when the server echoes them', async () => {
    const secret = 'Bearer wrong-token-c0ffee-5ecret';
    const d = await detect(fleet().target('bearer').url, { headers: { authorization: secret } });
    expect(d.outcome).toBe('NONE');
    const text = JSON.stringify(d);
    expect(text).not.toContain('wrong-token-c0ffee-5ecret');
    expect(text).toContain('[redacted]');
    expect(d.revisions[4]?.evidence?.status).toBe(401);
  });
});
