// The hostile TLS targets' certificates: a sim CA, and self-signed, expired and wrong-name leaves,
// minted in memory per process (certificates.ts).
import { type CertifiedKey, certificate, keyPem, newKeys } from '../certificates';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface HostileCertificates {
  /** The sim's own certificate authority (PEM): trust it to see past "unknown issuer" to the real fault. */
  ca: string;
  /** Self-signed, valid, for 127.0.0.1: only its issuer is wrong. */
  selfSigned: CertifiedKey;
  /** Issued by the sim CA for 127.0.0.1, valid from 2020-01-01 to 2020-01-02. */
  expired: CertifiedKey;
  /** Issued by the sim CA, valid, but for wrong-name.invalid rather than 127.0.0.1. */
  wrongName: CertifiedKey;
}

let minted: HostileCertificates | undefined;

/** The certificates of this process's hostile TLS targets, minted once (a few milliseconds). */
export function hostileCertificates(): HostileCertificates {
  minted ??= mintCertificates();
  return minted;
}

/** A new set of certificates (every call new keys and serial numbers). */
export function mintCertificates(): HostileCertificates {
  const now = Date.now();
  const validFrom = new Date(now - DAY_MS);
  const validTo = new Date(now + 365 * DAY_MS);
  const caKeys = newKeys();
  const caName = 'mcp-fleet fleet-sim hostile CA';
  const ca = certificate({
    subject: caName,
    keys: caKeys,
    issuer: { name: caName, keys: caKeys },
    notBefore: validFrom,
    notAfter: validTo,
    ca: true,
  });
  const leaf = (subject: string, from: Date, to: Date, alt: { ip?: string[]; dns?: string[] }): CertifiedKey => {
    const keys = newKeys();
    return {
      cert: certificate({
        subject,
        keys,
        issuer: { name: caName, keys: caKeys },
        notBefore: from,
        notAfter: to,
        ca: false,
        altNames: alt,
      }),
      key: keyPem(keys),
    };
  };
  const selfKeys = newKeys();
  return {
    ca,
    selfSigned: {
      cert: certificate({
        subject: 'hostile-tls-self-signed',
        keys: selfKeys,
        issuer: { name: 'hostile-tls-self-signed', keys: selfKeys },
        notBefore: validFrom,
        notAfter: validTo,
        ca: false,
        altNames: { ip: ['127.0.0.1'] },
      }),
      key: keyPem(selfKeys),
    },
    expired: leaf('hostile-tls-expired', new Date('2020-01-01T00:00:00Z'), new Date('2020-01-02T00:00:00Z'), {
      ip: ['127.0.0.1'],
    }),
    wrongName: leaf('hostile-tls-wrong-name', validFrom, validTo, { dns: ['wrong-name.invalid'] }),
  };
}
