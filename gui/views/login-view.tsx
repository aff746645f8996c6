// The login form, as Syncthing 2.x's: the user and password posted to /rest/noauth/auth/password
// open a session cookie (for a week with "stay logged in").
import { useState } from 'preact/hooks';
import { loginNeeded, messageOf, post } from '../api.ts';
import { Button, ErrorText, Field } from '../parts/ui.tsx';

export function LoginView() {
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [stay, setStay] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      await post('/rest/noauth/auth/password', { username: user, password, stayLoggedIn: stay });
      loginNeeded.value = false;
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form class="card" onSubmit={submit} aria-label="Log in">
        <h1>
          <img src="icon.svg" alt="" width="28" height="28" /> syncd
        </h1>
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
        <label class="check">
          <input type="checkbox" checked={stay} onChange={(e) => setStay(e.currentTarget.checked)} /> Stay
          logged in for a week
        </label>
        {error && <ErrorText>{error}</ErrorText>}
        <Button kind="primary" type="submit" disabled={busy}>
          Log in
        </Button>
      </form>
    </main>
  );
}
