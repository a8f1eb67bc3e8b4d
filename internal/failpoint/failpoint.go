// Package failpoint lets crash tests stop the bridge at a named point: when the environment
// variable BRIDGE_FAILPOINTS lists the point (comma-separated), Hit prints "failpoint <name>" on
// stderr and blocks forever, so the test can SIGKILL the process exactly there. Without the
// variable Hit costs one map lookup.
package failpoint

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

var (
	once   sync.Once
	points map[string]bool
)

// Hit pauses forever at name when it is enabled.
func Hit(name string) {
	once.Do(func() {
		points = map[string]bool{}
		for _, p := range strings.Split(os.Getenv("BRIDGE_FAILPOINTS"), ",") {
			if p = strings.TrimSpace(p); p != "" {
				points[p] = true
			}
		}
	})
	if !points[name] {
		return
	}
	fmt.Fprintf(os.Stderr, "failpoint %s\n", name)
	select {}
}
