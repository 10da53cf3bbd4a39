// One detection per seeded server, in the shape of @mcp-fleet/probe's Detection, agreeing with what
// its tests speak.
import { REVISIONS, type Revision } from '@mcp-fleet/probe';
import { byRank, FAILING_PIN, noise, rank, type ServerPlan } from './seed-plan';

function noteSentence(note: string): string {
  if (note === 'current') return 'This is the current protocol revision.';
  if (note.startsWith('deprecated')) return 'This revision is deprecated and eligible for removal.';
  return 'This is not the current revision.';
}

function evidence(e: {
  status: number | null;
  contentType: string | null;
  bodyPreview: string | null;
  jsonRpcErrorCode?: number;
  jsonRpcErrorMessage?: string;
  millis: number;
  message: string;
}) {
  return {
    status: e.status,
    contentType: e.contentType,
    bodyPreview: e.bodyPreview,
    jsonRpcErrorCode: e.jsonRpcErrorCode ?? null,
    jsonRpcErrorMessage: e.jsonRpcErrorMessage ?? null,
    millis: e.millis,
    reachabilityFailure: null,
    message: e.message,
  };
}

type Evidence = ReturnType<typeof evidence>;

interface RevisionEntry {
  revision: Revision;
  generation: string;
  supported: boolean;
  note: string;
  sentence: string;
  serverInfo?: { name: string; version: string };
  evidence?: Evidence;
}

export function detectionOf(server: ServerPlan) {
  const top = rank(server.final);
  // The server accepts a contiguous range of revisions up to the one it speaks, its pin included.
  let low = Math.max(1, top - Math.floor(noise(server.n, 7) * 3));
  if (server.pin && !server.failingPin) low = Math.min(low, rank(server.pin));
  if (server.failingPin) low = Math.max(low, rank(FAILING_PIN) + 1);
  const serverInfo = { name: `${server.name}-mcp`, version: `1.${server.n % 7}.${server.n % 13}` };
  const supportedSessions = [...Array(top - low + 1)].map((_, i) => byRank(low + i)).filter((r) => rank(r) <= 4);
  const newestSessions = supportedSessions[supportedSessions.length - 1];
  const revisions = REVISIONS.map((info, i): RevisionEntry => {
    const k = i + 1;
    const millis = 8 + Math.floor(noise(server.n, 8, k) * 120);
    const base = { revision: info.revision, generation: info.generation, note: info.note };
    const head = `${info.revision} (${info.generation})`;
    if (k >= low && k <= top) {
      return { ...base, supported: true, sentence: `${head}: supported. ${noteSentence(info.note)}`, serverInfo };
    }
    if (info.generation === 'HTTP+SSE transport') {
      const ev = evidence({
        status: 405,
        contentType: 'text/plain',
        bodyPreview: 'Method Not Allowed',
        millis,
        message: 'GET: the answer is not JSON-RPC (HTTP 405, text/plain)',
      });
      return { ...base, supported: false, sentence: `${head}: not supported (HTTP 405, text/plain).`, evidence: ev };
    }
    if (info.generation === 'sessions' && newestSessions) {
      const body = JSON.stringify({
        result: { protocolVersion: newestSessions, capabilities: { tools: {} }, serverInfo },
        jsonrpc: '2.0',
        id: 1,
      });
      const ev = evidence({
        status: 200,
        contentType: 'application/json',
        bodyPreview: body.slice(0, 200),
        millis,
        message: `The server answered with protocol ${newestSessions} instead.`,
      });
      return {
        ...base,
        supported: false,
        sentence: `${head}: not supported (the server answered with ${newestSessions}).`,
        evidence: ev,
      };
    }
    // A stateless-only server turns initialize away; a sessions server has no server/discover.
    const what = info.generation === 'stateless' ? 'server/discover' : 'initialize';
    const code = info.generation === 'stateless' ? -32000 : -32601;
    const text = info.generation === 'stateless' ? 'Bad Request: No valid session ID provided' : 'Method not found';
    const ev = evidence({
      status: 400,
      contentType: 'application/json',
      bodyPreview: JSON.stringify({ jsonrpc: '2.0', error: { code, message: text }, id: null }),
      jsonRpcErrorCode: code,
      jsonRpcErrorMessage: text,
      millis,
      message: `${what}: JSON-RPC error ${code} ${text} (HTTP 400, application/json)`,
    });
    return {
      ...base,
      supported: false,
      sentence: `${head}: not supported (HTTP 400, application/json).`,
      evidence: ev,
    };
  });
  const newest = [...revisions].reverse().find((r) => r.supported);
  return {
    outcome: newest ? 'DETECTED' : 'NONE',
    // Every unsupported revision answered about itself (HTTP 400 with a JSON-RPC error): no cause.
    cause: null,
    retryAfterHeader: null,
    newestSupported: newest?.revision ?? null,
    serverInfo: newest ? serverInfo : null,
    requests: 6 + Math.floor(noise(server.n, 9) * 3),
    millis: Math.max(...revisions.map((r) => r.evidence?.millis ?? 0)) + 40 + Math.floor(noise(server.n, 10) * 200),
    revisions,
  };
}
