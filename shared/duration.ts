// Durations in settings are written as people write them: 500ms, 10s, 2m; a bare number is seconds.
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = match[2] ?? 's';
  const ms = value * unitMs[unit as keyof typeof unitMs];
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

const unitMs = { ms: 1, s: 1000, m: 60_000 };
