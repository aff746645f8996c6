// HOST:PORT as the --address setting and the address file write it; IPv6 hosts go in brackets.
export interface Address {
  host: string;
  port: number;
}

export function parseAddress(text: string): Address | string {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  if (!match) return `"${text}" is not HOST:PORT (IPv6 hosts in brackets, as [::1]:8384)`;
  const host = (match[1] ?? match[2]) as string;
  const port = Number(match[3]);
  if (port > 65535) return `port ${port} is above 65535`;
  return { host, port };
}

export function formatAddress({ host, port }: Address): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
