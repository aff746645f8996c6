// The supervisor from the TypeScript sources, for `npm run dev`; `npm start` runs the build's `syncd serve`.
import { catchSignals } from './signals.ts';

const signals = catchSignals();
const { serveFromCommandLine } = await import('./serve.ts');
process.exit(await serveFromCommandLine(process.argv.slice(2), signals));
