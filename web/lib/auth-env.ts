// Sign-in as an environment gives it, parsed as the dashboard's start parses it: for tests and the
// checks of deploy files (the dashboard itself is handed its settings; auth-core.ts takes them).
import { type Env, parseEnv, webEnv } from '@mcp-fleet/config';
import { type WebAuth, webAuthFrom } from './auth-core';

export function webAuthFromEnv(env: Env): WebAuth {
  const settings = parseEnv(webEnv, env);
  return webAuthFrom(settings.signIn, settings.exposure.allowedHosts);
}
