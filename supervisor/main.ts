// The supervisor from the TypeScript sources, for `npm run dev`; `npm start` runs the build's `syncd serve`.
import { catchSignals } from './signals.ts';

const signals = catchSignals();
const { serveCommand } = await import('./run.ts');
process.exit(await serveCommand(process.argv.slice(2), process.env, signals));
