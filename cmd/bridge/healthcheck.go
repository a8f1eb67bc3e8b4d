package main

// bridge healthcheck: the container's HEALTHCHECK. The image has no shell and no curl (it is
// distroless), so the binary asks its own running server.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// defaultServerAddr is where bridge run listens when server.addr is set to nothing more
// specific (serve.go's default).
const defaultServerAddr = "127.0.0.1:8080"

// healthURL is the /healthz URL of a server listening at addr: an unspecified host (0.0.0.0,
// [::] or none, as a container listens) is asked on loopback; an empty addr is the default.
func healthURL(addr string) (string, error) {
	if addr == "" {
		addr = defaultServerAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("server address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// probeHealth GETs url within timeout and fails unless the answer is 200.
func probeHealth(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", url, err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}} // never through HTTP_PROXY
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: answered %s", url, resp.Status)
	}
	return nil
}

// newHealthcheckCmd is healthcheck: exit 0 when the running bridge's server answers /healthz.
func newHealthcheckCmd() *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Ask the running bridge's server for /healthz (exit 0 healthy, 1 not): the container's HEALTHCHECK",
		Long: `Ask the running bridge's HTTP server for GET /healthz and exit 0 on 200, 1 otherwise. It
reads no configuration: the address is --url, else BRIDGE_SERVER__ADDR (as the container image
sets it; 0.0.0.0 is asked on 127.0.0.1), else ` + defaultServerAddr + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				u, err := healthURL(os.Getenv("BRIDGE_SERVER__ADDR"))
				if err != nil {
					return usageError("BRIDGE_SERVER__ADDR: %v", err)
				}
				url = u
			}
			if err := probeHealth(cmd.Context(), url, timeout); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ok", url)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the URL to GET (default: http://<BRIDGE_SERVER__ADDR or "+defaultServerAddr+">/healthz)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}
