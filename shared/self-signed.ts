// A self-signed X.509 certificate (RFC 5280) with a new ECDSA key: the DER written here, the key made
// and the signature computed by Node's crypto. The X.509 libraries on npm (selfsigned over
// @peculiar/x509) took ~110 ms of CPU to load and sign, a third of a first start's supervisor; these
// certificates need a handful of DER types.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

export interface CertificateRequest {
  /** The subject (and issuer) name, its attributes in order. */
  subject: Array<[attribute: keyof typeof NAME_ATTRIBUTES, value: string]>;
  curve: 'P-256' | 'P-384';
  notBefore: Date;
  notAfter: Date;
  /** Whether the basic constraints (not a CA) and key usage extensions are marked critical. */
  critical: boolean;
  extendedKeyUsage: Array<keyof typeof EXTENDED_KEY_USAGES>;
  dnsNames: string[];
  ipAddresses?: string[];
}

const NAME_ATTRIBUTES = { O: '2.5.4.10', OU: '2.5.4.11', CN: '2.5.4.3' } as const;
const EXTENDED_KEY_USAGES = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' } as const;
const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/** The certificate and its private key (PKCS #8), as PEM. */
export function selfSignedCertificate(request: CertificateRequest): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: request.curve });
  const name = sequence(
    ...request.subject.map(([attribute, value]) =>
      set(sequence(oid(NAME_ATTRIBUTES[attribute]), tlv(UTF8_STRING, Buffer.from(value, 'utf8')))),
    ),
  );
  const serial = randomBytes(8);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and not zero
  const altNames = [
    ...request.dnsNames.map((dns) => tlv(0x82, Buffer.from(dns, 'ascii'))),
    ...(request.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  const extensions = [
    extension('2.5.29.19', request.critical, sequence()),
    // digitalSignature (bit 0) and keyEncipherment (bit 2): 0b101 and 5 unused bits.
    extension('2.5.29.15', request.critical, tlv(BIT_STRING, Buffer.from([5, 0xa0]))),
    extension(
      '2.5.29.37',
      false,
      sequence(...request.extendedKeyUsage.map((use) => oid(EXTENDED_KEY_USAGES[use]))),
    ),
    extension('2.5.29.17', false, sequence(...altNames)),
  ];
  const algorithm = sequence(oid(ECDSA_WITH_SHA256));
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name,
    sequence(time(request.notBefore), time(request.notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, algorithm, tlv(BIT_STRING, Buffer.from([0]), signature));
  const base64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

const BOOLEAN = 0x01;
const INTEGER = 0x02;
const BIT_STRING = 0x03;
const OCTET_STRING = 0x04;
const OBJECT_IDENTIFIER = 0x06;
const UTF8_STRING = 0x0c;
const UTC_TIME = 0x17;
const GENERALIZED_TIME = 0x18;

/** One DER element: tag, definite length, content. */
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const length: number[] = [];
  for (let rest = body.length; rest > 0; rest = Math.floor(rest / 256)) length.unshift(rest % 256);
  const header = body.length < 0x80 ? [tag, body.length] : [tag, 0x80 | length.length, ...length];
  return Buffer.concat([Buffer.from(header), body]);
}

const sequence = (...content: Buffer[]) => tlv(0x30, ...content);
const set = (...content: Buffer[]) => tlv(0x31, ...content);

/** A non-negative INTEGER from its big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const value = bytes.subarray(start);
  return tlv(INTEGER, (value[0] ?? 0) & 0x80 ? Buffer.from([0]) : Buffer.alloc(0), value);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const base128 = [arc % 128];
    for (let high = Math.floor(arc / 128); high > 0; high = Math.floor(high / 128))
      base128.unshift(0x80 | (high % 128));
    bytes.push(...base128);
  }
  return tlv(OBJECT_IDENTIFIER, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280, 4.1.2.5), in seconds, UTC. */
function time(date: Date): Buffer {
  const digits = date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:T]/g, '');
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050
    ? tlv(UTC_TIME, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(GENERALIZED_TIME, Buffer.from(digits, 'ascii'));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(
    oid(id),
    ...(critical ? [tlv(BOOLEAN, Buffer.from([0xff]))] : []),
    tlv(OCTET_STRING, value),
  );
}

/** An IP address's 4 or 16 bytes. */
function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip) || ip.includes('.')) throw new Error(`not an IP address this writes: ${ip}`);
  const [head = '', tail] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const [before, after] = [groups(head), groups(tail ?? '')];
  // `::` stands for the zero groups that make eight.
  const words = [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = Buffer.alloc(16);
  words.forEach((word, index) => bytes.writeUInt16BE(word, index * 2));
  return bytes;
}
