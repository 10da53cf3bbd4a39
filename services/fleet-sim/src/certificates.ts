// X.509 certificates built in memory with node:crypto: a small DER writer and an ECDSA P-256
// signature. No openssl binary, no files, nothing that expires between runs (every process mints its
// own), and an expired certificate is expired by construction. The hostile TLS targets mint theirs
// here (targets/hostile-certs.ts), and testkit builds the test CA on it (@mcp-fleet/fleet-sim/certificates).
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/** A certificate and its key, both PEM, as node:tls takes them. */
export interface CertifiedKey {
  cert: string;
  key: string;
}

export interface Keys {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

// --- DER -------------------------------------------------------------------------------------

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const content = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

const sequence = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);
const octets = (value: Buffer) => tlv(0x04, value);
const bits = (value: Buffer) => tlv(0x03, Buffer.from([0]), value);
const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);

/** A non-negative DER INTEGER from big-endian bytes, in its one minimal form. */
export function derInteger(value: Buffer): Buffer {
  // Minimal: no leading zero byte unless the next one has its top bit set (OpenSSL refuses the
  // padding as "illegal padding"). Signed: a leading 1 bit needs a 0 byte in front to stay positive.
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start += 1;
  const bytes = value.length === 0 ? Buffer.from([0]) : value.subarray(start);
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}
const integer = derInteger;

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const base128 = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  // RFC 5280: UTCTime through 2049, GeneralizedTime from 2050.
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), octets(value));
}

/** subjectAltName: IP addresses and DNS names. */
function altNames(names: { ip?: string[]; dns?: string[] }): Buffer {
  const ips = (names.ip ?? []).map((ip) => tlv(0x87, Buffer.from(ip.split('.').map(Number))));
  const dns = (names.dns ?? []).map((d) => tlv(0x82, Buffer.from(d, 'ascii')));
  return extension('2.5.29.17', false, sequence(...ips, ...dns));
}

function pem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

// --- certificates ----------------------------------------------------------------------------

export interface CertificateSpec {
  subject: string;
  keys: Keys;
  issuer: { name: string; keys: Keys };
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  altNames?: { ip?: string[]; dns?: string[] };
}

/** A certificate (PEM) for `spec.subject`'s keys, signed with its issuer's key. */
export function certificate(spec: CertificateSpec): string {
  const extensions: Buffer[] = spec.ca
    ? [
        // basicConstraints CA:TRUE (critical) and keyUsage keyCertSign + cRLSign (critical).
        extension('2.5.29.19', true, sequence(tlv(0x01, Buffer.from([0xff])))),
        extension('2.5.29.15', true, tlv(0x03, Buffer.from([0x01, 0x06]))),
      ]
    : [extension('2.5.29.19', true, sequence())];
  if (spec.altNames) extensions.push(altNames(spec.altNames));
  // Positive and 12 bytes long (RFC 5280: at most 20): the top bit clear, the next one set.
  const serial = randomBytes(12);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ECDSA_WITH_SHA256,
    name(spec.issuer.name),
    sequence(time(spec.notBefore), time(spec.notAfter)),
    name(spec.subject),
    spec.keys.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, spec.issuer.keys.privateKey);
  return pem(sequence(tbs, ECDSA_WITH_SHA256, bits(signature)));
}

/** A new ECDSA P-256 key pair. */
export function newKeys(): Keys {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** The private key, PKCS #8 PEM, as node:tls, nats-server and Postgres take it. */
export const keyPem = (keys: Keys): string => keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
