// The key ring tests seal stored credentials with: the key vitest.config.ts gives every test's
// environment (so a CLI or dashboard a test starts, which reads its environment, unseals the same).
import { type Keyring, loadKeyring } from '@mcp-fleet/auth';

export const TEST_SECRET_KEY = 'dGVzdHMgb25seTogbWNwLWZsZWV0IHRlc3Qga2V5ISE=';

/** A store opened in a test takes this (`openStore({ …, keyring: testKeyring() })`): the test key. */
export function testKeyring(): Keyring {
  return loadKeyring({ key: TEST_SECRET_KEY })!;
}
