package broker

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// waitStoreDispatched waits until the ConsumeQueues cover everything appended.
func waitStoreDispatched(t *testing.T, st *store.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}
