import { render } from 'preact';
import { storeKey } from './api.ts';
import { App } from './app.tsx';
import './style.css';

// The link `npm start` prints carries the API key after a # (never sent to the server): kept for this
// tab, and taken off the address.
const given = /^#key=([^&]+)$/.exec(location.hash)?.[1];
if (given) {
  storeKey(decodeURIComponent(given), false);
  history.replaceState(null, '', `${location.pathname}#/`);
}

render(<App />, document.getElementById('app') as HTMLElement);
