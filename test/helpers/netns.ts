// Network namespaces for the tests of discovery: two (or more) private worlds joined by veth pairs with
// addresses of 10.231.N.0/24, where broadcasts and announcements reach only each other. Made by the
// test, and removed afterwards with every process still inside them, whatever the outcome.
import { execa } from 'execa';
import type { Teardown } from './teardown-first.ts';

export interface Namespaces {
  /** The namespaces' names; `exec(n)` is the command prefix that runs a command inside the n-th. */
  names: string[];
  /** The address of the n-th namespace on its link to the first (the first's own, on the first link). */
  address: (n: number) => string;
  exec: (n: number) => string[];
}

/** Why namespaces cannot be made here (not root, no `ip`), or undefined when they can. */
export async function namespacesUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'network namespaces need root (.ci/run runs as root)';
  const ip = await execa('ip', ['netns', 'list'], { reject: false });
  if (ip.exitCode !== 0) return `ip netns does not work here: ${ip.stderr || ip.message}`;
  return undefined;
}

/**
 * Makes `count` namespaces, the first linked to each other one by a veth pair: the first is
 * 10.231.N.1 and the N-th 10.231.N.2 on link N; loopback is up in each.
 */
export async function makeNamespaces(t: Teardown, count: number): Promise<Namespaces> {
  const tag = `sd${process.pid % 100000}${Math.floor(Math.random() * 1000)}`;
  const names = Array.from({ length: count }, (_, n) => `${tag}n${n}`);
  t.teardown(() => removeNamespaces(names));
  for (const name of names) {
    await execa('ip', ['netns', 'add', name]);
    await execa('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  }
  const addresses = new Map<number, string>();
  for (let n = 1; n < count; n++) {
    const [near, far] = [`v${tag}a${n}`, `v${tag}b${n}`];
    await execa('ip', [
      'link',
      'add',
      near,
      'netns',
      names[0] as string,
      'type',
      'veth',
      'peer',
      'name',
      far,
      'netns',
      names[n] as string,
    ]);
    await execa('ip', ['-n', names[0] as string, 'addr', 'add', `10.231.${n}.1/24`, 'dev', near]);
    await execa('ip', ['-n', names[n] as string, 'addr', 'add', `10.231.${n}.2/24`, 'dev', far]);
    await execa('ip', ['-n', names[0] as string, 'link', 'set', near, 'up']);
    await execa('ip', ['-n', names[n] as string, 'link', 'set', far, 'up']);
    addresses.set(n, `10.231.${n}.2`);
  }
  addresses.set(0, '10.231.1.1');
  return {
    names,
    address: (n) => addresses.get(n) as string,
    exec: (n) => ['ip', 'netns', 'exec', names[n] as string],
  };
}

/** Kills every process left in the namespaces, then removes them (their veth pairs go with them). */
export async function removeNamespaces(names: readonly string[]): Promise<void> {
  for (const name of names) {
    const pids = await execa('ip', ['netns', 'pids', name], { reject: false });
    for (const pid of pids.stdout.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
  // A killed process leaves its namespace a moment later; removal waits for that.
  for (const name of names) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const pids = await execa('ip', ['netns', 'pids', name], { reject: false });
      if (pids.exitCode !== 0 || pids.stdout.trim() === '') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await execa('ip', ['netns', 'delete', name], { reject: false });
  }
}
