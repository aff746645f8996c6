// The login form. With a GUI password set, as Syncthing 2.x's: the user and password posted to
// /rest/noauth/auth/password open a session cookie (for a week with "stay logged in"). Without one,
// the API key (the service asks for it then): kept by this tab, or by this browser when asked to.
import { useState } from 'preact/hooks';
import { forgetKey, get, loginNeeded, loginReason, messageOf, post, storeKey } from '../api.ts';
import { Button, ErrorText, Field } from '../parts/ui.tsx';

export function LoginView() {
  const [byKey, setByKey] = useState(loginReason.value.key);
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [stay, setStay] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      if (byKey) {
        storeKey(key.trim(), stay);
        await get('/rest/system/ping').catch((failure: unknown) => {
          forgetKey();
          throw failure;
        });
      } else {
        await post('/rest/noauth/auth/password', { username: user, password, stayLoggedIn: stay });
      }
      loginNeeded.value = false;
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const reason = loginReason.value.message;
  return (
    <main class="login">
      <form class="card" onSubmit={submit} aria-label="Log in">
        <h1>
          <img src="icon.svg" alt="" width="28" height="28" /> syncd
        </h1>
        {byKey ? (
          <>
            <p>
              No GUI password is set: this page logs in with the service's API key. <code>npm start</code> at
              a terminal prints a link that does it for you; the key is also <code>gui.apiKey</code> in the
              home's <code>config.json</code>. Once in, Settings › GUI sets a user and password.
            </p>
            <Field label="API key">
              <input
                name="apikey"
                type="password"
                autocomplete="off"
                value={key}
                onInput={(e) => setKey(e.currentTarget.value)}
              />
            </Field>
          </>
        ) : (
          <>
            <p>This device's GUI asks for its user and password (Settings › GUI sets them).</p>
            <Field label="User">
              <input
                name="user"
                autocomplete="username"
                value={user}
                onInput={(e) => setUser(e.currentTarget.value)}
              />
            </Field>
            <Field label="Password">
              <input
                name="password"
                type="password"
                autocomplete="current-password"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </Field>
          </>
        )}
        <label class="check">
          <input type="checkbox" checked={stay} onChange={(e) => setStay(e.currentTarget.checked)} />{' '}
          {byKey ? 'Remember the key in this browser' : 'Stay logged in for a week'}
        </label>
        {error ? <ErrorText>{error}</ErrorText> : reason && <p class="muted">{reason}</p>}
        <div class="actions">
          <Button kind="primary" type="submit" disabled={busy}>
            Log in
          </Button>
          <Button onClick={() => setByKey(!byKey)}>
            {byKey ? 'Use the user and password' : 'Use the API key'}
          </Button>
        </div>
      </form>
    </main>
  );
}
