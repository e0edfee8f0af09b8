// The sign-in form: the token goes in a POST body, never a URL; the console checks it against
// the producer before it sets the cookie. A refusal says why (401, 403), never echoes the token.
import { Page, Refusal } from '../layout.js';

export function SignIn({ refused }: { refused?: unknown }) {
  return (
    <Page title="Sign in" page="signin" signedIn={false}>
      <h1>Sign in</h1>
      <p>Paste a producer token (EMQ_TOKENS). Looking needs its `read` capability, actions its `control`.</p>
      {refused !== undefined && <Refusal err={refused} what="The producer refused this token" />}
      <form method="post" action="/signin" class="stack">
        <label>
          Token <input type="password" name="token" autocomplete="current-password" required maxlength={512} autofocus />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">Scripts may send `Authorization: Bearer &lt;token&gt;` on any page instead.</p>
    </Page>
  );
}
