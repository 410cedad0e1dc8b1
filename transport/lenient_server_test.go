package transport

import (
	"context"
	"testing"
	"time"
)

// TestNumericExtFieldsKeepTheConnection: a peer that writes numbers, booleans and
// nulls as extFields values (and a string as the code) is served like any other,
// on the same connection, and the server remembers the language and version it
// announced.
func TestNumericExtFieldsKeepTheConnection(t *testing.T) {
	type seen struct {
		ext      map[string]string
		lang     string
		version  int16
		peerSeen bool
	}
	got := make(chan seen, 4)
	s := startServer(t, ServerConfig{}, HandlerFunc(func(_ context.Context, c *Conn, req *Command) *Command {
		lang, version, ok := c.Peer()
		got <- seen{req.Fields(), lang, version, ok}
		resp := NewResponse(Success, "")
		resp.ExtFields = map[string]string{"n": req.Field("queueId")}
		return resp
	}))
	nc := rawDial(t, s.Addr())
	headers := []string{
		`{"code":"11","language":"CPP","version":479,"opaque":7,"flag":0,"extFields":{"queueId":3,"queueOffset":12345678901234567890,"sysFlag":2.0,"commitOffset":true,"subscription":null}}`,
		`{"code":11,"language":"JAVA","version":401,"opaque":8,"flag":0,"extFields":{"queueId":"4"}}`,
	}
	want := []seen{
		{map[string]string{"queueId": "3", "queueOffset": "12345678901234567890", "sysFlag": "2.0", "commitOffset": "true"}, "CPP", 479, true},
		{map[string]string{"queueId": "4"}, "JAVA", 401, true},
	}
	for i, h := range headers {
		if _, err := nc.Write(rawFrame(SerializeJSON, []byte(h), nil)); err != nil {
			t.Fatal(err)
		}
		resp, err := DecodeFrame(nc, 0)
		if err != nil {
			t.Fatalf("request %d: connection lost: %v", i, err)
		}
		if resp.Opaque != int32(7+i) || !resp.IsResponse() || resp.ResponseCode() != Success {
			t.Fatalf("request %d: answer %v", i, resp)
		}
		select {
		case g := <-got:
			if g.lang != want[i].lang || g.version != want[i].version || !g.peerSeen || len(g.ext) != len(want[i].ext) {
				t.Fatalf("request %d: handler saw %+v, want %+v", i, g, want[i])
			}
			for k, v := range want[i].ext {
				if g.ext[k] != v {
					t.Fatalf("request %d: ext %s=%q, want %q (all %v)", i, k, g.ext[k], v, g.ext)
				}
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d never reached the handler", i)
		}
	}
}
