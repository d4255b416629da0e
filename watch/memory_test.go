package watch_test

import (
	"testing"

	"github.com/paygate-go/paygate/watch"
	"github.com/paygate-go/paygate/watch/watchtest"
)

func TestMemoryStoreContract(t *testing.T) {
	watchtest.Run(t, func(*testing.T) watch.Store { return &watch.MemoryStore{} })
}
