// A private certificate authority for TLS tests, made with openssl: a CA, a server certificate for
// 127.0.0.1 (and, if asked, other names), client certificates, and a second CA nobody trusts.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function selfSigned(dir: string, name: string, cn: string): void {
  openssl(
    [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
}

function signed(dir: string, name: string, cn: string, ext: string): { cert: string; key: string } {
  openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/** Make the CA and a server certificate in `dir` (which must exist). `altNames` default: IP 127.0.0.1 only. */
export function makeTestCa(dir: string, altNames = 'IP:127.0.0.1'): TestCa {
  selfSigned(dir, 'ca', 'mcp-fleet test CA');
  selfSigned(dir, 'other-ca', 'someone else');
  const server = signed(
    dir,
    'server',
    '127.0.0.1',
    `subjectAltName=${altNames}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`,
  );
  return {
    dir,
    ca: join(dir, 'ca.crt'),
    server,
    otherCa: join(dir, 'other-ca.crt'),
    client: (name) =>
      signed(
        dir,
        `client-${name}`,
        name,
        'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n',
      ),
  };
}

/** Whether openssl is on the PATH. */
export function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
