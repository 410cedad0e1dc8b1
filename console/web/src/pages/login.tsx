// Log-in when ACL is on: the account's accessKey and secretKey, checked by the console
// against a broker with a signed request. The secret is not kept by the page.
import { useState } from "preact/hooks";
import { api, type Session } from "../api";
import { Field, Problem } from "../ui";

export function LoginPage({ onLogin }: { onLogin: (s: Session) => void }) {
  const [ak, setAk] = useState("");
  const [sk, setSk] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = () => {
    if (!ak.trim() || !sk) {
      setError(new Error("both accessKey and secretKey are required"));
      return;
    }
    setBusy(true);
    api.login(ak.trim(), sk).then(
      (s) => {
        setBusy(false);
        setSk("");
        onLogin(s);
      },
      (e) => {
        setBusy(false);
        setError(e);
      },
    );
  };
  return (
    <main class="login">
      <h1>rocketraft console</h1>
      <p>ACL is on: log in with a RocketMQ account (accessKey and secretKey from plain_acl.yml).</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Field label="accessKey" name="accessKey" value={ak} onInput={setAk} />
        <Field label="secretKey" name="secretKey" type="password" value={sk} onInput={setSk} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Checking…" : "Log in"}
        </button>
      </form>
      <Problem error={error} title="Log-in" />
    </main>
  );
}
