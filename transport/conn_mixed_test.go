package transport

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestMixedSendsShareOneConnection: Invoke, InvokeAsync and oneway sends from
// many goroutines go through one connection's writer. Every frame must leave
// whole and unmixed: each answer matches its request, bodies of up to 256 KiB
// included (a writev that size can be split by the kernel).
func TestMixedSendsShareOneConnection(t *testing.T) {
	s := startServer(t, ServerConfig{}, echo)
	c := newClient(t, ClientConfig{})
	conn, err := c.conn(ctxTimeout(t, 5*time.Second), s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	body := func(g, i int) []byte {
		n := 16 << (uint(g*7+i) % 15) // 16 B … 256 KiB
		return bytes.Repeat([]byte{byte('a' + (g+i)%26)}, n)
	}
	const goroutines, each = 12, 40
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var async sync.WaitGroup
			for i := range each {
				key := strconv.Itoa(g*1000 + i)
				req := NewRequest(SendMessage, map[string]string{"k": key}, body(g, i))
				check := func(resp *Command, err error) {
					switch {
					case err != nil:
						errs <- err
					case resp.Field("k") != key || !bytes.Equal(resp.Body, body(g, i)):
						errs <- fmt.Errorf("answer to %s does not match its request", key)
					}
				}
				switch i % 3 {
				case 0:
					check(conn.Invoke(ctxTimeout(t, 10*time.Second), req))
				case 1:
					async.Add(1)
					if err := conn.InvokeAsync(req, 10*time.Second, func(resp *Command, err error) {
						defer async.Done()
						check(resp, err)
					}); err != nil {
						async.Done()
						errs <- err
					}
				default:
					if err := conn.InvokeOneway(req); err != nil {
						errs <- err
					}
				}
			}
			async.Wait()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case <-conn.Closed():
		t.Fatal("the connection closed under mixed writes")
	default:
	}
}
