// The hostile TLS targets' certificates, written as DER by hand: every one minted must parse, in
// its one minimal encoding (a random serial once began with a zero byte, which OpenSSL refuses as
// "illegal padding", and `mcp-fleet up` failed to start about once in sixty).
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derInteger } from '../src/certificates';
import { mintCertificates } from '../src/targets/hostile-certs';

describe('hostile certificates', () => {
  it('writes each INTEGER minimally and positive', () => {
    const hex = (bytes: number[]) => derInteger(Buffer.from(bytes)).toString('hex');
    expect(hex([5])).toBe('020105');
    expect(hex([0, 0, 5])).toBe('020105');
    expect(hex([0x80])).toBe('02020080');
    expect(hex([0, 0x80])).toBe('02020080');
    expect(hex([0, 0, 0x80, 1])).toBe('0203008001');
    expect(hex([0])).toBe('020100');
    expect(hex([0, 0])).toBe('020100');
    expect(hex([])).toBe('020100');
  });

  it('mints certificates that parse, with what each target needs, every time', () => {
    for (let round = 0; round < 150; round += 1) {
      const set = mintCertificates();
      const ca = new X509Certificate(set.ca);
      const self = new X509Certificate(set.selfSigned.cert);
      const expired = new X509Certificate(set.expired.cert);
      const wrong = new X509Certificate(set.wrongName.cert);
      expect(ca.ca).toBe(true);
      expect(self.checkIssued(self)).toBe(true);
      expect(self.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(expired.checkIssued(ca) && expired.verify(ca.publicKey)).toBe(true);
      expect(new Date(expired.validTo).getTime()).toBeLessThan(Date.now());
      expect(wrong.verify(ca.publicKey)).toBe(true);
      expect(wrong.checkIP('127.0.0.1')).toBeUndefined();
      expect(wrong.checkHost('wrong-name.invalid')).toBe('wrong-name.invalid');
    }
  });
});
