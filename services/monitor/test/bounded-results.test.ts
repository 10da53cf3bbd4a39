// Bounded results end to end, on real parts: fleet-sim's hostile-huge-error answers every request
// with a 250 KB JSON-RPC error message; agents probe it (handshakes and detections), publish their
// results through NATS JetStream (whose default max_payload is 1 MiB), control ingests them into
// Postgres. Every run and detection is recorded, and small: each string within the probe's bounds.
import { BOUNDS } from '@mcp-fleet/probe';
import { waitFor } from '@mcp-fleet/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGIONS, startTestMonitor, type TestMonitor } from './support';

/** A result row this small holds the error's first 2 KB at most, in a few strings: nowhere near 250 KB. */
const SMALL_ROW_BYTES = 16 * 1024;

describe('a 250 KB JSON-RPC error message, end to end on Postgres + NATS', () => {
  let m: TestMonitor;
  let db: pg.Client;
  beforeAll(async () => {
    // A generous timeout: a newest run reads five 250 KB answers, on a machine other tests load too.
    m = await startTestMonitor(
      'postgres+nats',
      [{ name: 'hostile-huge-error', tests: ['newest', '2025-11-25'], detection: '5s' }],
      { interval: '5s', timeout: '5s' },
    );
    db = new pg.Client({ connectionString: m.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await m?.close();
  });

  it('records its handshake runs and detections in both regions, each small and cut to its bounds', async () => {
    const { runs, detections } = await waitFor(
      'runs of both tests and detections in both regions',
      async () => {
        const runs = await db.query<{
          mode: string;
          region: string;
          outcome: string;
          message: string;
          evidence: { message: string; jsonRpcErrorCode: number; jsonRpcErrorMessage: string } | null;
          bytes: number;
        }>(`select mode, region, outcome, message, evidence, octet_length(row_to_json(runs)::text) as bytes from runs`);
        const detections = await db.query<{
          region: string;
          outcome: string;
          result: { revisions: { sentence: string; evidence?: { message: string; jsonRpcErrorCode: number } }[] };
          bytes: number;
        }>(`select region, outcome, result, octet_length(row_to_json(detections)::text) as bytes from detections`);
        const everywhere = <R extends { region: string }>(rows: R[], also: (r: R) => boolean = () => true) =>
          REGIONS.every((region) => rows.some((r) => r.region === region && also(r)));
        const done =
          everywhere(runs.rows, (r) => r.mode === 'newest') &&
          everywhere(runs.rows, (r) => r.mode === 'pinned') &&
          everywhere(detections.rows);
        return done ? { runs: runs.rows, detections: detections.rows } : undefined;
      },
      60_000,
    );

    for (const run of runs) {
      const what = `${run.mode} run in ${run.region}`;
      expect(run.outcome, what).toBe('protocol_error');
      expect(run.message, what).toMatch(/^initialize: JSON-RPC error -32600 Invalid Request: the server says far/);
      expect(run.message.length, what).toBe(BOUNDS.message);
      expect(run.message.endsWith('…'), what).toBe(true);
      expect(run.evidence?.jsonRpcErrorCode, what).toBe(-32600);
      expect(run.evidence?.message.length, what).toBe(BOUNDS.message);
      expect(run.evidence?.jsonRpcErrorMessage.length, what).toBe(BOUNDS.preview);
      expect(run.bytes, what).toBeLessThan(SMALL_ROW_BYTES);
    }
    for (const d of detections) {
      const what = `detection in ${d.region}`;
      expect(d.outcome, what).toBe('NONE');
      expect(d.result.revisions, what).toHaveLength(5);
      for (const r of d.result.revisions) {
        expect(r.evidence?.jsonRpcErrorCode, what).toBe(-32600);
        expect(r.evidence?.message.length, what).toBe(BOUNDS.message);
        expect(r.sentence.length, what).toBeLessThanOrEqual(BOUNDS.message);
      }
      expect(d.bytes, what).toBeLessThan(5 * SMALL_ROW_BYTES);
    }
    // They came through NATS, and nothing was refused on the way.
    expect(m.bus.kind).toBe('nats');
    expect(m.bus.stats()).toMatchObject({ poison: 0 });
  }, 120_000);
});
