// Loaded when a password is first hashed or checked: most starts of either process never need it.
const bcrypt = async () => (await import('bcryptjs')).default;

/** Syncthing's cost for the GUI password's bcrypt hash (lib/config guiconfiguration.go SetPassword). */
export const BCRYPT_COST = 10;

/** A bcrypt hash as Syncthing and bcryptjs write it: $2a$, $2b$ or $2y$, the cost, 53 characters. */
export function isBcryptHash(text: string): boolean {
  return /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(text);
}

/** The hash stored for a password given in plain text; a hash given is kept as it is. */
export async function storedPassword(given: string): Promise<string> {
  if (given === '' || isBcryptHash(given)) return given;
  return (await bcrypt()).hash(given, BCRYPT_COST);
}

/** Whether `password` is the one whose hash is stored (in time that does not depend on it). */
export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  if (!isBcryptHash(stored)) return false;
  return (await bcrypt()).compare(password, stored);
}
