package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
)

// unknownID is the usage error (exit 2) for an id that names nothing stored: the command did
// nothing, and says which id it could not find.
func unknownID(kind string, ids ...string) error {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = fmt.Sprintf("%q", id)
	}
	if len(ids) == 1 {
		return usageError("no %s with id %s", kind, quoted[0])
	}
	return usageError("no %s with ids %s", kind, strings.Join(quoted, ", "))
}

// unknownName is the usage error (exit 2) for a name that is neither configured nor stored,
// naming the configured ones.
func unknownName(kind, name string, configured []string) error {
	if len(configured) == 0 {
		return usageError("no %s named %q (none configured)", kind, name)
	}
	return usageError("no %s named %q (configured: %s)", kind, name, strings.Join(configured, ", "))
}

// webhookNames are the names of the configured webhook endpoints.
func webhookNames(cfg *Config) []string {
	var out []string
	for _, w := range cfg.Webhooks {
		out = append(out, w.Name)
	}
	return out
}

// checkEndpointKnown is unknownName unless name is a configured endpoint or one the store has
// disabled (an endpoint since removed from the configuration can still be turned back on).
func checkEndpointKnown(ctx context.Context, cfg *Config, store bridge.Store, name string) error {
	names := webhookNames(cfg)
	if slices.Contains(names, name) {
		return nil
	}
	disabled, err := store.DisabledEndpoints(ctx)
	if err != nil {
		return err
	}
	if _, ok := disabled[name]; ok {
		return nil
	}
	return unknownName("endpoint", name, names)
}

// checkDeliveriesKnown is unknownID naming every id in ids that no stored delivery has.
func checkDeliveriesKnown(ctx context.Context, store bridge.Store, ids []string) error {
	var missing []string
	for _, id := range ids {
		_, _, err := store.Delivery(ctx, id)
		switch {
		case errors.Is(err, bridge.ErrDeliveryNotFound):
			missing = append(missing, id)
		case err != nil:
			return err
		}
	}
	if len(missing) > 0 {
		return unknownID("delivery", missing...)
	}
	return nil
}
