// Numbers as people read them: sizes in binary units, as Syncthing's GUI shows them.
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function bytes(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  let unit = 0;
  let scaled = Math.abs(value);
  while (scaled >= 1024 && unit < UNITS.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2;
  return `${value < 0 ? '-' : ''}${scaled.toFixed(digits)} ${UNITS[unit]}`;
}

export const rate = (value: number | undefined) => `${bytes(value)}/s`;

export function percent(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return `${value >= 99.95 || value === 0 ? value.toFixed(0) : value.toFixed(1)} %`;
}

export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.floor(seconds);
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${s % 60}s`;
  return `${s}s`;
}

export function time(iso: string | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export const count = (value: number | undefined) =>
  value === undefined ? '–' : value.toLocaleString('en-US');

/** The first group of a device ID, as Syncthing's GUI names a device it has no name for. */
export const shortId = (id: string) => id.slice(0, 7);
