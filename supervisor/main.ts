// The supervisor process; `npm start` runs it as `syncd serve`, which is the same.
import { supervisorMain } from './run-supervisor.ts';

process.exit(await supervisorMain(process.argv.slice(2), process.env));
