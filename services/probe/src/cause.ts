// Why a probe learnt nothing about a revision: the one place that reads a failed reply's evidence
// and names its cause. A 401, a 503, a refused connection or an expired certificate says nothing
// about which revisions a server speaks (not era evidence: docs/protocol.md#not-era-evidence), so
// a detection where one such cause explains every revision leads with it instead of "not an MCP
// server", and a run's message leads with it instead of "did not identify itself". Detection,
// handshake, the CLI and the dashboard all ask here. Pure: no imports but types, so the
// dashboard's browser code can use it.
import type { Evidence } from './evidence';

/** The causes, each with the words an operator reads first. A closed set: the bus validates it. */
export const CAUSES = {
  unreachable: 'unreachable',
  dns: 'DNS',
  tls: 'TLS',
  auth_required: 'auth required',
  server_error: 'server error',
  timeout: 'timeout',
  policy: 'refused by policy',
} as const;

export type Cause = keyof typeof CAUSES;
export const CAUSE_NAMES = Object.keys(CAUSES) as Cause[];

/** A cause read back from storage or a message (a string of the closed set, or not). */
export function isCause(value: unknown): value is Cause {
  return typeof value === 'string' && Object.hasOwn(CAUSES, value);
}

/** What cause-reading needs of evidence (probe's Evidence); loose, so a stored (older) copy reads too. */
export interface CauseEvidence {
  status?: Evidence['status'] | undefined;
  reachabilityFailure?: string | null | undefined;
  message?: string | null | undefined;
}

/** The cause a failed reply shows, or null when the reply was an answer about the revision itself. */
export function causeOf(e: CauseEvidence | null | undefined): Cause | null {
  if (!e) return null;
  switch (e.reachabilityFailure) {
    case 'connection_refused':
    case 'connection_reset':
    case 'network':
    // stdio: the command could not start, or its process ended before answering.
    case 'spawn_failed':
    case 'exited_early':
      return 'unreachable';
    case 'dns':
      return 'dns';
    case 'tls':
      return 'tls';
    case 'timeout':
      return 'timeout';
    case 'policy':
      return 'policy';
  }
  const status = e.status ?? null;
  if (status === 401 || status === 403) return 'auth_required';
  if (status !== null && status >= 500 && status <= 599) return 'server_error';
  return null;
}

/** The cause every one of these replies shows, or null when one has none or two differ. */
export function sharedCause(list: readonly (CauseEvidence | null | undefined)[]): Cause | null {
  const causes = list.map(causeOf);
  const first = causes[0] ?? null;
  return first !== null && causes.every((c) => c === first) ? first : null;
}

/**
 * Nothing was learnt about the revision: the reply was a cause (above), a 429, or never sent (the
 * budget ran out). Tables show it as "unknown", not "not supported".
 */
export function learntNothing(e: CauseEvidence | null | undefined): boolean {
  if (!e) return false;
  return causeOf(e) !== null || e.status === 429 || e.reachabilityFailure === 'request_budget';
}

/** Node's certificate error codes in an operator's words. */
const TLS_WORDS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'the certificate has expired',
  CERT_NOT_YET_VALID: 'the certificate is not valid yet',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the certificate chain ends in a self-signed certificate nobody trusts',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate is for another name',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the certificate is issued by a CA this machine does not trust',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the certificate is issued by a CA this machine does not trust',
};

/**
 * One line that leads with the cause, e.g. `auth required: HTTP 401 (the server asked for
 * credentials)`, from the evidence of one reply that shows it.
 */
export function causeSentence(cause: Cause, e: CauseEvidence): string {
  // An evidence message reads "<step>: <what happened>"; the step (initialize, GET…) is not the news.
  const detail = (e.message ?? '').replace(/^[\w/]+: /, '');
  const status = e.status ?? 0;
  switch (cause) {
    case 'auth_required':
      return `${CAUSES[cause]}: HTTP ${status} (the server asked for credentials)`;
    case 'server_error':
      return `${CAUSES[cause]}: HTTP ${status} (the server failed; it may be down or overloaded)`;
    case 'tls': {
      const code = /\(([A-Z_]+)[:)]/.exec(detail)?.[1];
      const words = code ? TLS_WORDS[code] : undefined;
      return `${CAUSES[cause]}: ${words ? `${words} (${code})` : detail}`;
    }
    default:
      // "DNS lookup for x did not answer…" already leads with its cause.
      return detail.toLowerCase().startsWith(CAUSES[cause].toLowerCase()) ? detail : `${CAUSES[cause]}: ${detail}`;
  }
}
