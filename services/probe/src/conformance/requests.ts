// What a conformance connection's requests carry on any transport: the 2026-07-28 `_meta`
// envelope, and the capabilities read from an opening's result.
import { CLIENT_INFO } from '../client-info';
import { META } from '../openings/stateless';

/** The `_meta` a 2026-07-28 request carries. */
export function modernMeta(revision: string): Record<string, unknown> {
  return { [META.protocolVersion]: revision, [META.clientCapabilities]: {}, [META.clientInfo]: CLIENT_INFO };
}

/** The capabilities an opening's result declares (an empty set when it declares none, or not as an object). */
export function capabilitiesOf(result: Record<string, unknown> | undefined): Record<string, unknown> {
  const caps = result?.capabilities;
  return caps && typeof caps === 'object' && !Array.isArray(caps) ? (caps as Record<string, unknown>) : {};
}
