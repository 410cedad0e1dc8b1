// The console's shell: session (log-in when ACL is on), navigation and a path router. The
// server answers index.html for every non-API path, so /topics/Orders can be bookmarked.
import { Component, render, type ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, setUnauthenticatedHandler, type Operation, type Session } from "./api";
import { ChartsPage } from "./pages/charts";
import { ClusterPage } from "./pages/cluster";
import { GroupPage, GroupsPage } from "./pages/groups";
import { LoginPage } from "./pages/login";
import { MessagePage, MessagesPage } from "./pages/messages";
import { RaftPage } from "./pages/raft";
import { TopicPage, TopicsPage } from "./pages/topics";
import { Problem } from "./ui";
import "./style.css";

const nav: { path: string; label: string }[] = [
  { path: "/cluster", label: "Cluster" },
  { path: "/topics", label: "Topics" },
  { path: "/groups", label: "Consumer groups" },
  { path: "/messages", label: "Messages" },
  { path: "/raft", label: "Raft operations" },
  { path: "/charts", label: "Charts" },
];

function usePath(): [URL, (p: string) => void] {
  const [url, setUrl] = useState(new URL(location.href));
  useEffect(() => {
    const f = () => setUrl(new URL(location.href));
    addEventListener("popstate", f);
    return () => removeEventListener("popstate", f);
  }, []);
  const go = (p: string) => {
    history.pushState(null, "", p);
    setUrl(new URL(location.href));
  };
  return [url, go];
}

/**
 * Guard keeps a page's rendering bug from blanking the console: it shows the error in words and
 * the navigation stays usable. It resets when the path changes (main is keyed by the path).
 */
class Guard extends Component<{ children: ComponentChildren }, { error?: unknown }> {
  state: { error?: unknown } = {};
  componentDidCatch(error: unknown) {
    this.setState({ error });
  }
  render() {
    if (this.state.error)
      return (
        <section>
          <Problem
            error={this.state.error}
            title="This page failed to render (a console bug; other pages still work)"
          />
        </section>
      );
    return this.props.children;
  }
}

function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [url, go] = usePath();
  const loadSession = () => api.session().then((s) => (setSession(s), setError(undefined)), setError);
  useEffect(() => {
    setUnauthenticatedHandler(() => setSession((s) => (s ? { ...s, loggedIn: false } : s)));
    loadSession();
  }, []);

  if (error && !session)
    return (
      <main class="boot">
        <h1>rocketraft console</h1>
        <Problem error={error} title="The console server did not answer" />
        <button type="button" onClick={loadSession}>
          Try again
        </button>
      </main>
    );
  if (!session) return <main class="boot">Loading…</main>;
  if (session.aclEnabled && !session.loggedIn) return <LoginPage onLogin={(s) => setSession(s)} />;

  const ops = new Set<Operation>(session.operations ?? []);
  const can = (op: Operation) => ops.has(op);
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const section = parts[0] ?? "cluster";
  let page;
  switch (section) {
    case "cluster":
      page = <ClusterPage />;
      break;
    case "topics":
      page = parts[1] ? <TopicPage name={parts[1]} can={can} go={go} /> : <TopicsPage can={can} go={go} />;
      break;
    case "groups":
      page = parts[1] ? <GroupPage name={parts[1]} can={can} go={go} /> : <GroupsPage go={go} />;
      break;
    case "messages":
      page = parts[1] ? (
        <MessagePage msgId={parts[1]} topic={url.searchParams.get("topic") ?? undefined} go={go} />
      ) : (
        <MessagesPage go={go} initial={url.searchParams} />
      );
      break;
    case "raft":
      page =
        ops.size === 0 || ![...ops].some((o) => o.startsWith("raft.")) ? (
          <section>
            <Problem
              error={`the account ${session.accessKey || ""} may not run raft operations; an admin account can`}
              title="Raft operations"
            />
          </section>
        ) : (
          <RaftPage can={can} />
        );
      break;
    case "charts":
      page = <ChartsPage />;
      break;
    default:
      page = (
        <section>
          <Problem error={`no page ${url.pathname}; pick one above`} title="Not found" />
        </section>
      );
  }
  return (
    <div class="shell">
      <header>
        <h1>rocketraft</h1>
        <nav>
          {nav
            .filter((n) => n.path !== "/raft" || [...ops].some((o) => o.startsWith("raft.")))
            .map((n) => (
              <a
                href={n.path}
                class={"/" + section === n.path ? "on" : ""}
                onClick={(e) => (e.preventDefault(), go(n.path))}
              >
                {n.label}
              </a>
            ))}
        </nav>
        <span class="who">
          {session.aclEnabled ? (
            <>
              {session.accessKey} {session.admin ? "(admin)" : "(read-only)"}{" "}
              <button
                type="button"
                onClick={() => api.logout().finally(() => setSession({ ...session, loggedIn: false }))}
              >
                Log out
              </button>
            </>
          ) : (
            "ACL off"
          )}
          {session.version ? <small> v{session.version}</small> : null}
        </span>
      </header>
      <main key={url.pathname}>
        <Guard>{page}</Guard>
      </main>
    </div>
  );
}

// The boot message in index.html is for the seconds before this script runs; preact keeps
// foreign children of the root, so drop it first.
const root = document.getElementById("app")!;
root.textContent = "";
render(<App />, root);
