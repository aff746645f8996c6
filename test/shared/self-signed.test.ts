import { createPrivateKey, X509Certificate } from 'node:crypto';
import { execa } from 'execa';
import t from 'tap';
import { selfSignedCertificate } from '../../shared/self-signed.ts';

const request = {
  subject: [
    ['O', 'Syncthing'],
    ['CN', 'a name past 127 bytes long: ' + 'x'.repeat(120)],
  ] as Array<['O' | 'OU' | 'CN', string]>,
  curve: 'P-256' as const,
  notBefore: new Date('2049-12-31T23:59:58.250Z'),
  notAfter: new Date('2069-06-01T12:00:00Z'),
  critical: false,
  extendedKeyUsage: ['serverAuth' as const],
  dnsNames: ['localhost'],
  ipAddresses: ['127.0.0.1', '::1', 'fe80::12:3400:0:1'],
};

t.test('the certificate is what was asked for, signed by its own key', async (t) => {
  const { cert, key } = selfSignedCertificate(request);
  const parsed = new X509Certificate(cert);
  t.equal(parsed.subject, `O=Syncthing\nCN=${request.subject[1]?.[1]}`, 'a name longer than 127 bytes');
  t.equal(parsed.issuer, parsed.subject, 'self-issued');
  t.equal(new Date(parsed.validFrom).toISOString(), '2049-12-31T23:59:58.000Z', 'UTCTime, in seconds');
  t.equal(new Date(parsed.validTo).toISOString(), '2069-06-01T12:00:00.000Z', 'GeneralizedTime from 2050');
  t.equal(
    parsed.subjectAltName,
    'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:FE80:0:0:0:12:3400:0:1',
  );
  t.same(parsed.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'server authentication');
  t.equal(parsed.ca, false);
  t.ok(parsed.checkPrivateKey(createPrivateKey(key)), 'the key is the certificate’s');
  t.ok(parsed.verify(parsed.publicKey), 'the signature holds');
  t.equal(parsed.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  t.match(parsed.serialNumber, /^[0-7][0-9A-F]{15}$/, 'a positive 64-bit serial');
  t.not(selfSignedCertificate(request).cert, cert, 'a new key and serial each time');
});

const openssl = await execa('openssl', ['version'], { reject: false }).catch(() => undefined);
const skip = openssl?.exitCode === 0 ? false : 'no openssl command here';

t.test('OpenSSL reads it as strict DER, with the extensions asked for', { skip }, async (t) => {
  const { cert } = selfSignedCertificate({ ...request, critical: true, curve: 'P-384' });
  const text = (await execa('openssl', ['x509', '-noout', '-text'], { input: cert })).stdout;
  t.match(text, /Basic Constraints: critical\s+CA:FALSE/);
  t.match(text, /Key Usage: critical\s+Digital Signature, Key Encipherment/);
  t.match(text, /Extended Key Usage: \s*TLS Web Server Authentication/);
  t.match(text, /NIST CURVE: P-384/);
  t.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  const parsed = await execa('openssl', ['asn1parse', '-strictpem'], { input: cert, reject: false });
  t.equal(parsed.exitCode, 0, parsed.stderr);
});

t.test('an address that is not an IP address is refused, not written wrong', async (t) => {
  t.throws(() => selfSignedCertificate({ ...request, ipAddresses: ['localhost'] }), /not an IP address/);
  t.throws(() => selfSignedCertificate({ ...request, ipAddresses: ['::ffff:1.2.3.4'] }), /not an IP address/);
});
