// The prompt `investigate_era_move {server}`: walks on-call through a server's latest move — what
// changed, when, which regions saw it and how it was judged, the runs around it and their traces —
// with the data gathered from the API into the message, and the tools to use next.
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ApiCaller } from './caller';

interface Move {
  id: number;
  region: string;
  fromRevision: string | null;
  toRevision: string | null;
  downgrade: boolean;
  eraChanged: boolean;
  at: string;
  state: string;
  runId: string | null;
}

/** The investigation's text for one server (by id or name); throws when no server is named so. */
export async function investigation(caller: ApiCaller, idOrName: string): Promise<string> {
  const { servers } = await caller.call<{ servers: { id: string; name: string }[] }>('GET', '/api/servers');
  const id = servers.find((s) => s.id === idOrName || s.name === idOrName)?.id ?? idOrName;
  const { server } = await caller.call<{
    server: { id: string; name: string; url: string; byRegion: unknown; tests: unknown; detection: unknown };
  }>('GET', `/api/servers/${encodeURIComponent(id)}`);
  const q = `server=${server.id}&range=30d&limit=50`;
  const [{ moves }, { moves: raw }, { runs }, regions] = await Promise.all([
    caller.call<{ moves: Move[] }>('GET', `/api/era-moves?${q}&view=confirmed`),
    caller.call<{ moves: Move[] }>('GET', `/api/era-moves?${q}&view=raw`),
    caller.call<{ runs: unknown[] }>('GET', `/api/servers/${server.id}/runs?limit=30`),
    caller.call('GET', `/api/servers/${server.id}/regions`),
  ]);
  const latest = moves[0] ?? raw[0];
  const lines: string[] = [`You are on call for the MCP server "${server.name}" (${server.url}).`];
  if (!latest) {
    lines.push(
      '',
      'It has made no era move or downgrade in the last 30 days. Check its state per region below instead.',
    );
  } else {
    const what = `now ${latest.toRevision ?? 'none'}, was ${latest.fromRevision ?? 'none'}`;
    const sameMove = raw.filter((m) => m.fromRevision === latest.fromRevision && m.toRevision === latest.toRevision);
    lines.push(
      '',
      `Its latest move: ${what}${latest.eraChanged ? ' (the era changed)' : ''}${latest.downgrade ? ' (a downgrade)' : ''}, ` +
        `at ${latest.at} in ${latest.region}, judged ${latest.state}.`,
      `Regions that saw the same move: ${[...new Set(sameMove.map((m) => `${m.region} at ${m.at} (${m.state})`))].join('; ') || latest.region}.`,
    );
  }
  lines.push(
    '',
    'Walk through it in this order:',
    '1. What changed: the revisions before and after, and whether the era changed (legacy 2024-11-05…2025-11-25, modern 2026-07-28). A client pinned to the old revision breaks if the server stopped speaking it: look for tests failing with "Server no longer speaks protocol …".',
    '2. When, and where: which regions saw it, in which order; a move one region sees and others do not is a region disagreement (geo-DNS, a partial rollout), not a fleet-wide change.',
    '3. The runs around it: compare the last run before the move with the first after (outcome, negotiated revision, message); follow a run’s traceId to its trace.',
    '4. What the server speaks now: call detect_mcp_protocol on its URL (every revision, with evidence) and run_check for the era it speaks; get_server shows the regions’ consensus.',
    '5. Say whether clients will keep working, which ones break, and whether it flapped (a move and its way back inside the flap window) or held.',
    '',
    'The data, from mcp-fleet:',
    '```json',
    JSON.stringify(
      {
        server: {
          id: server.id,
          name: server.name,
          url: server.url,
          byRegion: server.byRegion,
          tests: server.tests,
          detection: server.detection,
        },
        regions,
        confirmedMoves: moves.slice(0, 10),
        rawMoves: raw.slice(0, 20),
        recentRuns: runs,
      },
      null,
      1,
    ),
    '```',
  );
  return lines.join('\n');
}

export function registerPrompts(server: McpServer, caller: ApiCaller): void {
  server.registerPrompt(
    'investigate_era_move',
    {
      title: 'Investigate an era move',
      description:
        'Walk on-call through a server’s latest era move: what changed, when, which regions, the runs and traces',
      argsSchema: z.object({ server: z.string().min(1).max(200).describe('The server’s name or id') }),
    },
    async ({ server: named }) => ({
      description: `The latest era move of ${named}`,
      messages: [
        { role: 'user' as const, content: { type: 'text' as const, text: await investigation(caller, named) } },
      ],
    }),
  );
}
