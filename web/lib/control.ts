// Control's API, for the changes the dashboard makes: the control plane owns the fleet, its
// target policy and the rule that a pinned test is run once before it is saved.
import 'server-only';
import { shared } from './shared';

/** Control's API: `mcp-fleet up`'s own, or on its own MCP_FLEET_API_URL (the dashboard's start hands it over). */
export function apiUrl(): string {
  return shared().apiUrl ?? 'http://127.0.0.1:7070';
}

/**
 * The dashboard's own token for control (admin scope to change the fleet): `mcp-fleet up` hands it
 * over, on its own it is MCP_FLEET_API_TOKEN. Sent only from here, server side; never to a browser.
 */
function apiToken(): string | undefined {
  return shared().apiToken;
}

export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  const token = apiToken();
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    res = await fetch(new URL(path, apiUrl()), {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      cache: 'no-store',
      redirect: 'error',
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ControlError(0, `the control plane at ${apiUrl()} did not answer (${(err as Error).message})`, null);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: keep the status.
  }
  if (!res.ok) {
    const message = (json as { error?: unknown } | null)?.error;
    const said = typeof message === 'string' ? message : `HTTP ${res.status}`;
    // Control's refusal is about the dashboard's configuration, not the user: say which setting.
    if (res.status === 401 || res.status === 403)
      throw new ControlError(
        res.status,
        `control refused the dashboard's API token (${said}); give the dashboard an admin token in MCP_FLEET_API_TOKEN`,
        json,
      );
    throw new ControlError(res.status, said, json);
  }
  return json as T;
}
