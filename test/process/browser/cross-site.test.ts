import { createServer } from 'node:http';
import getPort from 'get-port';
import t from 'tap';
import { call, startService } from '../../helpers/service.ts';
import { hasChromium, launchChromium, NO_CHROMIUM } from '../../helpers/chromium.ts';

// A web page in the user's own browser must not be able to stop, restart or clear the service, by any
// means a page has. Real headless Chromium (Debian's, which .ci/run installs), driven by playwright-core.
const skip = hasChromium ? false : NO_CHROMIUM;

/** The attacks, as a page from another origin can make them; `target` is the service's origin. */
function attackPage(target: string, key: string): string {
  const actions = ['shutdown', 'restart', 'error/clear'];
  return `<!doctype html><meta charset="utf-8"><title>attack</title><body><script>
const target = ${JSON.stringify(target)};
const actions = ${JSON.stringify(actions)};
const results = [];
const note = (what, outcome) => results.push(what + ': ' + outcome);
(async () => {
  for (const action of actions) {
    const url = target + '/rest/system/' + action;
    // An HTML form post, the classic cross-site request: it carries no X-API-Key.
    const frame = document.createElement('iframe');
    frame.name = 'f-' + action.replace('/', '-');
    document.body.append(frame);
    const form = document.createElement('form');
    form.method = 'POST'; form.action = url; form.target = frame.name;
    form.innerHTML = '<input name="x" value="1">';
    document.body.append(form);
    form.submit();
    // A "simple" request that needs no preflight, and whose answer the page cannot read.
    await fetch(url, { method: 'POST', mode: 'no-cors', body: 'x' }).then(() => note('no-cors ' + action, 'sent'), (e) => note('no-cors ' + action, e.name));
    // With the key in a header: the browser must ask first (a preflight), and must be refused.
    await fetch(url, { method: 'POST', headers: { 'X-API-Key': ${JSON.stringify(key)} } }).then((r) => note('with key ' + action, r.status), (e) => note('with key ' + action, e.name));
    await fetch(url, { method: 'POST', headers: { Authorization: 'Bearer ' + ${JSON.stringify(key)} } }).then((r) => note('bearer ' + action, r.status), (e) => note('bearer ' + action, e.name));
    navigator.sendBeacon(url, 'x');
    const image = new Image(); image.src = url;
    const script = document.createElement('script'); script.src = url; document.body.append(script);
  }
  // A read of the key-protected status, to show nothing can be read across origins either.
  await fetch(target + '/rest/system/status').then((r) => r.text()).then((text) => note('read status', text), (e) => note('read status', e.name));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  window.done = results;
})();
</script></body>`;
}

/** A page served under a name rebound to 127.0.0.1: same origin as the service, with the real key. */
function reboundPage(key: string): string {
  return `<!doctype html><meta charset="utf-8"><title>rebound</title><script>
(async () => {
  const results = [];
  for (const action of ['shutdown', 'restart', 'error/clear']) {
    await fetch('/rest/system/' + action, { method: 'POST', headers: { 'X-API-Key': ${JSON.stringify(key)} } })
      .then((response) => results.push(action + ': ' + response.status), (error) => results.push(action + ': ' + error));
  }
  await fetch('/rest/system/ping', { headers: { 'X-API-Key': ${JSON.stringify(key)} } })
    .then((response) => results.push('ping: ' + response.status), (error) => results.push('ping: ' + error));
  window.done = results;
})();
</script>`;
}

t.test(
  'pages from another origin, or under a rebound name, can neither act nor read',
  { skip },
  async (t) => {
    const service = await startService(t);
    await call(service, 'POST', '/rest/system/error', { body: 'keep me' });
    const pid = await service.workerPid();

    // The attacker's own site: another port on this machine, so another origin.
    const evilPort = await getPort({ host: '127.0.0.1' });
    const evil = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(attackPage(service.url, service.apiKey));
    });
    await new Promise<void>((resolve) => evil.listen(evilPort, '127.0.0.1', resolve));
    t.teardown(() => evil.close());

    const browser = await launchChromium([
      // DNS rebinding, as the browser sees it: a name of the attacker's that resolves to 127.0.0.1.
      '--host-resolver-rules=MAP rebound.evil.test 127.0.0.1',
      // Chromium's own Local Network Access checks would stop the rebound page's requests before they
      // reach the service; they are off so that the service's own defence is what is tested.
      '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults',
    ]);
    t.teardown(() => browser.close());
    const page = await browser.newPage();

    await page.goto(`http://127.0.0.1:${evilPort}/`);
    const results = (await page
      .waitForFunction(() => (window as unknown as { done?: string[] }).done, undefined, { timeout: 20_000 })
      .then((h) => h.jsonValue())) as string[];
    t.comment(results.join('; '));
    for (const line of results.filter((l) => l.startsWith('with key') || l.startsWith('bearer'))) {
      t.match(line, /: TypeError$/, `blocked by the browser: ${line}`);
    }
    t.match(
      results.find((l) => l.startsWith('read status')),
      /: TypeError$/,
      'the status cannot be read',
    );

    // The rebound page: its document comes from the attacker (a route), its requests reach the service.
    const rebound = `http://rebound.evil.test:${service.address.split(':')[1]}`;
    await page.route(`${rebound}/attack`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: reboundPage(service.apiKey) }),
    );
    await page.goto(`${rebound}/attack`);
    const reboundResults = (await page
      .waitForFunction(() => (window as unknown as { done?: string[] }).done, undefined, { timeout: 20_000 })
      .then((h) => h.jsonValue())) as string[];
    t.same(
      reboundResults,
      ['shutdown: 403', 'restart: 403', 'error/clear: 403', 'ping: 403'],
      'refused for its Host, key or no key',
    );

    // Afterwards: the same worker answers, nothing restarted or stopped, the errors are untouched.
    t.same(await service.client.ping(), { ping: 'pong' });
    t.equal(await service.workerPid(), pid, 'the same worker');
    t.equal((await service.client.status()).supervisor.restarts, 0);
    t.equal((await service.client.errors())[0]?.message, 'keep me', 'errors untouched');
    t.notOk(service.logs.some((line) => line.msg === 'shutting down' || line.msg === 'restarting'));
  },
);
