// /api/credentials: named credentials (issue 18), stored sealed and referenced by id, so an MCP
// tool takes `mcpCredentialId` and a secret never passes through an agent's context. Listed by
// name, origin and header names; a value never leaves control through the API. A request that
// names one (detect, check, a server) gets its headers only for a URL on the credential's origin.
import { CredentialsUnreadableError, SecretKeyError } from '@mcp-fleet/auth';
import { headerMap, serverName, targetUrl } from '@mcp-fleet/config';
import {
  CredentialInUseError,
  CredentialOriginError,
  createCredential,
  credentialHeadersFor,
  credentialOrigin,
  type Db,
  DuplicateCredentialError,
  deleteCredential,
  listCredentials,
  UnknownCredentialError,
} from '@mcp-fleet/store';
import { z } from 'zod';
import { HttpError, parseBody, type Router } from '../http';
import type { ApiContext } from './context';
import { uuid } from './lookups';

const MAX_HEADERS = 50;

/** An origin as written: scheme, host and port only (a trailing `/` is allowed); nothing that would be dropped. */
const originField = targetUrl.refine((o) => {
  const u = new URL(o);
  return (
    u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password && !o.includes('?') && !o.includes('#')
  );
}, 'an origin: scheme://host[:port], without a path, query or credentials');

/**
 * Trust boundary: the body is hostile input. Header names and values are checked as detect.ts
 * checks them (config's headerMap: a token name, none the probe owns, no control characters).
 */
const CreateCredential = z
  .strictObject({
    name: serverName,
    /** Any URL on the origin: its origin is taken. */
    url: targetUrl.optional(),
    origin: originField.optional(),
    headers: headerMap
      .refine((h) => Object.keys(h).length >= 1, 'at least one header')
      .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`),
  })
  .refine((b) => (b.url === undefined) !== (b.origin === undefined), {
    message: 'give `url` (its origin is taken) or `origin`, one of them',
    path: ['origin'],
  });

/** `credentialId` as a body gives it (detect, check, a server). */
export const credentialIdField = uuid;

export function credentialRoutes(router: Router, ctx: ApiContext): void {
  router
    .on('GET', '/api/credentials', async () => ({ json: { credentials: await listCredentials(ctx.db) } }))
    .on('POST', '/api/credentials', async (req) => {
      const body = parseBody(CreateCredential, req.body);
      const origin = credentialOrigin(body.url ?? body.origin ?? '');
      if (origin === null) throw new HttpError(400, 'origin: an http:// or https:// origin');
      try {
        const credential = await createCredential(ctx.db, { name: body.name, origin, headers: body.headers });
        return { status: 201, json: { credential } };
      } catch (err) {
        if (err instanceof DuplicateCredentialError) throw new HttpError(409, err.message);
        if (err instanceof SecretKeyError) throw new HttpError(503, err.message);
        throw err;
      }
    })
    .on('DELETE', '/api/credentials/:id', async (req) => {
      const id = req.params.id!;
      if (!uuid.safeParse(id).success) throw new HttpError(404, `no credential ${id}`);
      try {
        if (!(await deleteCredential(ctx.db, id))) throw new HttpError(404, `no credential ${id}`);
      } catch (err) {
        if (err instanceof CredentialInUseError) throw new HttpError(409, err.message);
        throw err;
      }
      return { status: 204 };
    });
}

/**
 * The headers a request sends to `url`: a credential's (unsealed for that URL only) or those given,
 * not both. An unknown id, or a URL off the credential's origin, is the request's to fix (400),
 * refused before anything is sent anywhere.
 */
export async function requestHeaders(
  db: Db,
  url: string,
  given: { headers?: Record<string, string> | undefined; credentialId?: string | null | undefined },
): Promise<Record<string, string>> {
  const headers = given.headers ?? {};
  if (given.credentialId === undefined || given.credentialId === null) return headers;
  if (Object.keys(headers).length > 0)
    throw new HttpError(400, 'give `headers` or `credentialId`, not both: a credential brings its own headers');
  return credentialHeaders(db, given.credentialId, url);
}

/** A credential's headers for `url`, its refusals as HTTP errors. */
export async function credentialHeaders(db: Db, id: string, url: string): Promise<Record<string, string>> {
  try {
    return (await credentialHeadersFor(db, id, url)).headers;
  } catch (err) {
    if (err instanceof UnknownCredentialError) throw new HttpError(400, `credentialId: no credential ${id}`);
    if (err instanceof CredentialOriginError) throw new HttpError(400, `credentialId: ${err.message}`);
    // The operator's to fix (the key), not the request's: nothing secret is in the message.
    if (err instanceof SecretKeyError || err instanceof CredentialsUnreadableError)
      throw new HttpError(503, err.message);
    throw err;
  }
}
