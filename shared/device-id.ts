import { createHash } from 'node:crypto';

// RFC 4648's standard base32 alphabet, as Syncthing writes device IDs.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * A device's ID as Syncthing writes it, from the DER bytes of its certificate: SHA-256, base32 without
 * padding (52 characters), a check character after each 13, and groups of 7 joined by dashes, as
 * `RFR5QYV-USWWDUL-HS54SQX-PPBXXJW-ARCNP65-74JIARS-VVIDBEL-STAQAQG`.
 */
export function deviceId(certificateDer: Uint8Array): string {
  return deviceIdFromRaw(createHash('sha256').update(certificateDer).digest());
}

/** A device ID from its 32 raw bytes (as BEP carries it); throws for another length. */
export function deviceIdFromRaw(raw: Uint8Array): string {
  if (raw.length !== 32) throw new Error(`a raw device ID has 32 bytes, not ${raw.length}`);
  return format(base32(raw));
}

/** The 32 raw bytes of a valid device ID, as BEP carries it. */
export function rawDeviceId(id: string): Buffer {
  const plain = canonicalDeviceId(id)
    .replace(/-/g, '')
    .replace(/(.{13})./g, '$1');
  const out = Buffer.alloc(32);
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const char of plain) {
    value = ((value << 5) | ALPHABET.indexOf(char)) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      out[at++] = (value >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  return out;
}

/**
 * The 64-bit short ID Syncthing puts in version vectors: the first 8 bytes of the raw ID, big-endian.
 * Its values pass 2^53, so it is a bigint.
 */
export function shortId(certificateDer: Uint8Array): bigint {
  return createHash('sha256').update(certificateDer).digest().readBigUInt64BE(0);
}

/** The short ID of a valid device ID (as `shortId` computes it from the certificate). */
export function shortIdOf(id: string): bigint {
  const plain = canonicalDeviceId(id)
    .replace(/-/g, '')
    .replace(/(.{13})./g, '$1');
  let value = 0n;
  // The first 64 bits are the first 13 characters (65 bits) less the last bit.
  for (const char of plain.slice(0, 13)) value = (value << 5n) | BigInt(ALPHABET.indexOf(char));
  return value >> 1n;
}

/** A short ID as Syncthing prints it: the first 7 base32 characters of its 8 bytes, big-endian. */
export function shortIdString(id: bigint): string {
  // Syncthing's ShortID.String: none for 0 (a version no device has modified).
  if (id === 0n) return '';
  let out = '';
  for (let i = 0; i < 7; i++) out += ALPHABET[Number((id >> BigInt(59 - 5 * i)) & 31n)];
  return out;
}

/** Why a device ID is malformed, or undefined when it is valid; legacy 52-character IDs are accepted. */
export function deviceIdProblem(text: string): string | undefined {
  const plain = normalize(text);
  if (plain.length !== 56 && plain.length !== 52) {
    return `a device ID has 56 characters (63 with its dashes), not ${plain.length}`;
  }
  const wrong = [...plain].find((char) => !ALPHABET.includes(char));
  if (wrong !== undefined) return `"${wrong}" is not a character of device IDs (A to Z and 2 to 7)`;
  if (plain.length === 56) {
    for (let group = 0; group < 4; group++) {
      const chunk = plain.slice(group * 14, group * 14 + 13);
      if (luhn32(chunk) !== plain[group * 14 + 13]) {
        return `the check character of group ${group + 1} is wrong: a character is mistyped`;
      }
    }
  }
  return undefined;
}

/** The canonical form of a valid device ID (grouped, with check characters), as Syncthing parses it. */
export function canonicalDeviceId(text: string): string {
  const problem = deviceIdProblem(text);
  if (problem) throw new Error(`"${text}": ${problem}`);
  const plain = normalize(text);
  return format(
    plain.length === 56 ? [0, 1, 2, 3].map((g) => plain.slice(g * 14, g * 14 + 13)).join('') : plain,
  );
}

/** Orders valid device IDs as Syncthing sorts them: by the bytes of the raw ID. */
export function compareDeviceIds(a: string, b: string): number {
  // Base32 keeps the order of the bytes when compared by alphabet position, check characters aside.
  const raw = (id: string) =>
    canonicalDeviceId(id)
      .replace(/-/g, '')
      .replace(/(.{13})./g, '$1');
  const [x, y] = [raw(a), raw(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = ALPHABET.indexOf(x[i] as string) - ALPHABET.indexOf(y[i] as string);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

// Syncthing reads 0, 1 and 8 as the letters they look like, and ignores case, dashes and spaces.
function normalize(text: string): string {
  return text
    .replace(/=+$/, '')
    .toUpperCase()
    .replace(/[-\s]/g, '')
    .replace(/0/g, 'O')
    .replace(/1/g, 'I')
    .replace(/8/g, 'B');
}

/** 52 base32 characters with a check character after each 13, in 8 groups of 7. */
function format(plain: string): string {
  let checked = '';
  for (let group = 0; group < 4; group++) {
    const chunk = plain.slice(group * 13, group * 13 + 13);
    checked += chunk + luhn32(chunk);
  }
  return (checked.match(/.{7}/g) ?? []).join('-');
}

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/**
 * Syncthing's check character, which is not the standard Luhn mod N: it walks left to right with the
 * factor starting at 1 (lib/protocol/luhn.go).
 */
function luhn32(chunk: string): string {
  let factor = 1;
  let sum = 0;
  for (const char of chunk) {
    const addend = factor * ALPHABET.indexOf(char);
    factor = factor === 2 ? 1 : 2;
    sum += Math.floor(addend / 32) + (addend % 32);
  }
  return ALPHABET[(32 - (sum % 32)) % 32] as string;
}
