// The layer rules of .dependency-cruiser.cjs, checked over the sources: no import circle, and no
// folder importing one it must not (docs/design.md draws the floors).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise, type IConfiguration } from 'dependency-cruiser';
import t from 'tap';
import { packageRoot } from '../../shared/paths.ts';

const config = createRequire(import.meta.url)(join(packageRoot, '.dependency-cruiser.cjs')) as IConfiguration;

t.test('no import breaks a layer rule or closes a circle', async (t) => {
  const previous = process.cwd();
  process.chdir(packageRoot);
  t.teardown(() => process.chdir(previous));
  const result = await cruise(['worker', 'shared', 'supervisor', 'scripts', 'gui'], {
    ...config.options,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
  });
  const output = result.output;
  if (typeof output === 'string') throw new Error(`dependency-cruiser answered text: ${output}`);
  const broken = output.summary.violations.map(
    (violation) =>
      `${violation.rule.name}: ${violation.from} → ${violation.to}` +
      (violation.cycle ? ` (${violation.cycle.map((step) => step.name).join(' → ')})` : ''),
  );
  t.same(broken, [], broken.join('\n') || 'no violation');
  t.ok(output.summary.totalCruised > 150, `${output.summary.totalCruised} modules cruised`);
  t.ok(config.forbidden && config.forbidden.length >= 15, 'the rules are read');
});
