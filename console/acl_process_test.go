package console

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"
)

const testACL = `
accounts:
  - accessKey: consoleAdmin
    secretKey: console-admin-secret
    admin: true
  - accessKey: readerAK
    secretKey: reader-secret-123
    defaultTopicPerm: SUB
    defaultGroupPerm: SUB
`

// TestConsoleWithACL runs the brokers with aclEnable and the console in ACL
// mode: nothing but the session answers before a login, a wrong secret is
// refused by the broker, the session cookie is HttpOnly and SameSite=Strict,
// a non-admin sees the cluster but no operations and gets 403 on every
// change, and an admin's change runs (signed with the admin's account).
func TestConsoleWithACL(t *testing.T) {
	aclFile := filepath.Join(t.TempDir(), "plain_acl.yml")
	if err := os.WriteFile(aclFile, []byte(testACL), 0o600); err != nil {
		t.Fatal(err)
	}
	adminCreds := sign.Credentials{AccessKey: "consoleAdmin", SecretKey: "console-admin-secret"}
	f := startFixture(t, adminCreds, "aclEnable=true", "aclFile="+aclFile)

	anon := newHTTPClient(t)
	s := f.ok(t, "GET", "/api/v1/session", nil)
	if s["aclEnabled"] != true || s["loggedIn"] != false || len(s["operations"].([]any)) != 0 {
		t.Fatalf("session before login: %v", s)
	}
	f.wantError(t, anon, "GET", "/api/v1/cluster", nil, 401, codeUnauthenticated, "")
	f.wantError(t, anon, "GET", "/api/v1/events", nil, 401, codeUnauthenticated, "")
	f.wantError(t, anon, "POST", "/api/v1/topics", map[string]any{"name": "T", "confirm": true}, 401, codeUnauthenticated, "")

	// The login is checked against a broker: wait for one to be registered.
	eventually(t, 30*time.Second, "a broker to check logins against", func() bool {
		code, _ := f.do(t, newHTTPClient(t), "POST", "/api/v1/login", map[string]any{"accessKey": "readerAK", "secretKey": "reader-secret-123"})
		return code == http.StatusOK
	})
	f.wantError(t, anon, "POST", "/api/v1/login", map[string]any{"accessKey": "readerAK", "secretKey": "wrong-secret-000"}, 401, codeUnauthenticated, "secretKey")
	f.wantError(t, anon, "POST", "/api/v1/login", map[string]any{"accessKey": "nobody", "secretKey": "whatever-secret"}, 401, codeUnauthenticated, "secretKey")
	f.wantError(t, anon, "POST", "/api/v1/login", map[string]any{"accessKey": "readerAK"}, 400, codeBadRequest, "secretKey")

	// A non-admin: sees the cluster, may do nothing.
	reader := newHTTPClient(t)
	req, _ := http.NewRequest("POST", f.base+"/api/v1/login", strings.NewReader(`{"accessKey":"readerAK","secretKey":"reader-secret-123"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := reader.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Fatalf("login: %d cookie %+v", resp.StatusCode, cookie)
	}
	s = f.okAs(t, reader, "GET", "/api/v1/session", nil)
	if s["loggedIn"] != true || s["admin"] != false || s["accessKey"] != "readerAK" || len(s["operations"].([]any)) != 0 {
		t.Fatalf("reader's session: %v", s)
	}
	leader := f.waitLeaderAs(t, reader)
	f.wantError(t, reader, "POST", "/api/v1/topics", map[string]any{"name": "Denied", "confirm": true}, 403, codeForbidden, "")
	f.wantError(t, reader, "POST", "/api/v1/raft/broker-a/transfer-leader", map[string]any{"confirm": true}, 403, codeForbidden, "")
	f.wantError(t, reader, "POST", "/api/v1/raft/broker-a/snapshot", map[string]any{"confirm": true}, 403, codeForbidden, "")
	f.wantError(t, reader, "POST", "/api/v1/groups/g/reset", map[string]any{"topic": "T", "timestamp": 0, "confirm": true}, 403, codeForbidden, "")
	f.wantError(t, reader, "DELETE", "/api/v1/topics/TBW102", map[string]any{"confirm": true}, 403, codeForbidden, "")
	// Previews are reads: allowed.
	f.okAs(t, reader, "POST", "/api/v1/raft/broker-a/preview", map[string]any{"op": "snapshot"})

	// An admin: may change, still under the confirmation rule.
	adm := newHTTPClient(t)
	f.okAs(t, adm, "POST", "/api/v1/login", map[string]any{"accessKey": "consoleAdmin", "secretKey": "console-admin-secret"})
	if s := f.okAs(t, adm, "GET", "/api/v1/session", nil); s["admin"] != true || len(s["operations"].([]any)) != len(allOps) {
		t.Fatalf("admin's session: %v", s)
	}
	f.wantError(t, adm, "POST", "/api/v1/topics", map[string]any{"name": "Allowed"}, 400, codeConfirmation, "confirm")
	f.okAs(t, adm, "POST", "/api/v1/topics", map[string]any{"name": "Allowed", "confirm": true})
	var target string
	for id := range f.ClientAddr {
		if id != leader {
			target = id
			break
		}
	}
	f.okAs(t, adm, "POST", "/api/v1/raft/broker-a/transfer-leader", map[string]any{"id": target, "confirm": true})
	if got := f.waitLeaderAs(t, adm); got != target {
		t.Fatalf("leader after the admin's transfer: %s, want %s", got, target)
	}

	// Logout ends the session.
	f.okAs(t, reader, "POST", "/api/v1/logout", nil)
	f.wantError(t, reader, "GET", "/api/v1/cluster", nil, 401, codeUnauthenticated, "")
}
