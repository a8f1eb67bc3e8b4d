package zoom

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// tokens caches the Server-to-Server OAuth token: fetched with grant_type=account_credentials,
// renewed five minutes before it expires and at once after a 401. The token is never logged.
type tokens struct {
	cfg clientcredentials.Config
	// hc fetches the tokens.
	hc *http.Client

	mu  sync.Mutex
	tok *oauth2.Token
}

func newTokens(c Config, hc *http.Client) *tokens {
	return &tokens{hc: hc, cfg: clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.OAuthURL,
		AuthStyle:      oauth2.AuthStyleInHeader,
		EndpointParams: url.Values{"grant_type": {"account_credentials"}, "account_id": {c.AccountID}}}}
}

// get returns a token valid for at least five more minutes.
func (t *tokens) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && time.Until(t.tok.Expiry) > 5*time.Minute {
		return t.tok.AccessToken, nil
	}
	tok, err := t.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, t.hc))
	if err != nil {
		return "", fmt.Errorf("zoom oauth (account_credentials): %w", err)
	}
	t.tok = tok
	return tok.AccessToken, nil
}

// scopes returns the scopes of the app's token, as its answer lists them (space-separated:
// https://developers.zoom.us/docs/internal-apps/s2s-oauth/).
func (t *tokens) scopes(ctx context.Context) (string, error) {
	if _, err := t.get(ctx); err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == nil {
		return "", nil
	}
	s, _ := t.tok.Extra("scope").(string)
	return s, nil
}

// invalidate drops token after a 401, unless a newer one replaced it already.
func (t *tokens) invalidate(token string) {
	t.mu.Lock()
	if t.tok != nil && t.tok.AccessToken == token {
		t.tok = nil
	}
	t.mu.Unlock()
}
