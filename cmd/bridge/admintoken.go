package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/transcript-bridge/bridge/bridge/server/status"
)

// adminTokenName is the file of the admin token the bridge makes itself when none is configured.
const adminTokenName = "admin.token"

// adminToken returns the status page's admin token and the file it is in: the one
// server.admin_token_file names, or else one the bridge made (and keeps) next to its SQLite
// store (./data for PostgreSQL): 24 random bytes in hex, in a file only the bridge's user may
// read. made is true when the file was made now. The token itself is never logged.
func adminToken(cfg *Config) (token, path string, made bool, err error) {
	if f := cfg.Server.AdminTokenFile; f != "" {
		t, err := status.ReadToken(f)
		if err != nil {
			return "", f, false, usageError("server.admin_token_file: %v", err)
		}
		return t, f, false, nil
	}
	dir := "./data"
	if cfg.Store.Driver == "sqlite" && cfg.Store.DSN != "" {
		dir = filepath.Dir(cfg.Store.DSN)
	}
	path = filepath.Join(dir, adminTokenName)
	if t, err := status.ReadToken(path); err == nil {
		return t, path, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", path, false, fmt.Errorf("%s (made by an earlier start; remove it to have a new one made, or set server.admin_token_file): %w", path, err)
	}
	b := make([]byte, 24)
	rand.Read(b)
	token = hex.EncodeToString(b)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", path, false, fmt.Errorf("make the admin token in %s: %w", dir, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another replica made it meanwhile
		t, err := status.ReadToken(path)
		return t, path, false, err
	}
	if err != nil {
		return "", path, false, fmt.Errorf("make the admin token: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", path, false, fmt.Errorf("make the admin token: %w", err)
	}
	return token, path, true, nil
}
