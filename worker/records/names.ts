// Names as Syncthing's protocol accepts them (lib/protocol, lib/fs).

/** Why a name is not one Syncthing accepts (canonical, relative, `/`-separated), or undefined. */
export function nameProblem(name: string): string | undefined {
  if (name === '' || name === '.' || name === '..') return 'empty, . or ..';
  if (name.startsWith('/') || name.startsWith('../')) return 'not relative to the folder';
  if (name.includes('\0')) return 'a NUL character';
  const parts = name.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return 'not in canonical form';
  return undefined;
}
