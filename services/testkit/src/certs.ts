// A private certificate authority for TLS tests: a CA, a server certificate for 127.0.0.1 (and, if
// asked, other names), client certificates, and a second CA nobody trusts. Minted in memory by
// fleet-sim's certificate writer (the one the hostile TLS targets use) and written to `dir` as PEM
// files, which nats-server and Postgres read.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificate, type Keys, keyPem, newKeys } from '@mcp-fleet/fleet-sim/certificates';

export interface TestCa {
  dir: string;
  /** The CA's certificate (what clients trust). */
  ca: string;
  server: { cert: string; key: string };
  /** A CA that signed nothing here: trusting it instead must fail. */
  otherCa: string;
  /** A client certificate and key whose CN is `name`, signed by the CA. */
  client(name: string): { cert: string; key: string };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** `IP:127.0.0.1,DNS:localhost` (openssl's subjectAltName syntax, which callers pass) as lists. */
function parseAltNames(altNames: string): { ip: string[]; dns: string[] } {
  const ip: string[] = [];
  const dns: string[] = [];
  for (const part of altNames.split(',')) {
    const [kind, value = ''] = part.trim().split(/:(.*)/s);
    if (kind === 'IP') ip.push(value);
    else if (kind === 'DNS') dns.push(value);
    else throw new Error(`makeTestCa: unsupported subjectAltName ${part}`);
  }
  return { ip, dns };
}

/** Make the CA and a server certificate in `dir` (which must exist). `altNames` default: IP 127.0.0.1 only. */
export function makeTestCa(dir: string, altNames = 'IP:127.0.0.1'): TestCa {
  // Valid from a day ago for two days, as the openssl-made ones were.
  const notBefore = new Date(Date.now() - DAY_MS);
  const notAfter = new Date(Date.now() + 2 * DAY_MS);
  const write = (file: string, text: string) => {
    writeFileSync(join(dir, file), text, { mode: 0o600 });
    return join(dir, file);
  };
  const selfSigned = (file: string, name: string): Keys => {
    const keys = newKeys();
    write(`${file}.crt`, certificate({ subject: name, keys, issuer: { name, keys }, notBefore, notAfter, ca: true }));
    write(`${file}.key`, keyPem(keys));
    return keys;
  };
  const caName = 'mcp-fleet test CA';
  const caKeys = selfSigned('ca', caName);
  selfSigned('other-ca', 'someone else');
  const signed = (file: string, subject: string, alt?: { ip: string[]; dns: string[] }) => {
    const keys = newKeys();
    const issuer = { name: caName, keys: caKeys };
    return {
      cert: write(`${file}.crt`, certificate({ subject, keys, issuer, notBefore, notAfter, ca: false, altNames: alt })),
      key: write(`${file}.key`, keyPem(keys)),
    };
  };
  return {
    dir,
    ca: join(dir, 'ca.crt'),
    server: signed('server', '127.0.0.1', parseAltNames(altNames)),
    otherCa: join(dir, 'other-ca.crt'),
    client: (name) => signed(`client-${name}`, name),
  };
}
