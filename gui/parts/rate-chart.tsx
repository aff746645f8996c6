// A sparkline of a device's traffic over the last minutes (the store's samples, one every few
// seconds): in and out as two lines on one scale, the newest at the right edge. Drawn as inline SVG,
// so that no charting library is needed; the label says the current rates for a screen reader.
import { rate } from '../format.ts';
import { RATE_SAMPLES, type RateSample } from '../store.ts';

const HEIGHT = 40;

export function RateChart(props: { samples: RateSample[] | undefined; label: string }) {
  const samples = props.samples ?? [];
  const last = samples.at(-1);
  const top = Math.max(1, ...samples.flatMap((sample) => [sample.in, sample.out]));
  // The newest sample at the right edge; an empty chart until the readings come in.
  const offset = RATE_SAMPLES - samples.length;
  const points = (key: 'in' | 'out') =>
    samples
      .map((sample, i) => `${offset + i},${(HEIGHT - (sample[key] / top) * (HEIGHT - 2) - 1).toFixed(1)}`)
      .join(' ');
  return (
    <svg
      class="chart"
      role="img"
      aria-label={`${props.label}: in ${rate(last?.in ?? 0)}, out ${rate(last?.out ?? 0)}`}
      viewBox={`0 0 ${RATE_SAMPLES - 1} ${HEIGHT}`}
      preserveAspectRatio="none"
    >
      {samples.length > 1 && (
        <>
          <polyline
            class="in"
            points={points('in')}
            fill="none"
            stroke-width="1.5"
            vector-effect="non-scaling-stroke"
          />
          <polyline
            class="out"
            points={points('out')}
            fill="none"
            stroke-width="1.5"
            vector-effect="non-scaling-stroke"
          />
        </>
      )}
    </svg>
  );
}
