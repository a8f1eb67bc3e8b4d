// Package openapitest checks HTTP traffic against an OpenAPI 3.1 description in tests: a
// RoundTripper that validates every request it sends and every answer it gets.
package openapitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

var (
	mu    sync.Mutex
	cache = map[string]validator.Validator{}
	// validating serializes validations: libopenapi builds schemas lazily and is not safe for
	// concurrent use.
	validating sync.Mutex
)

// Validator returns a validator of spec, failing the test when the description itself is not
// valid OpenAPI 3.1. Validators are built once per spec.
func Validator(t testing.TB, spec []byte) validator.Validator {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if v, ok := cache[string(spec)]; ok {
		return v
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatalf("OpenAPI description: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("OpenAPI description: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("OpenAPI description is not valid OpenAPI 3.1: %v", describe(verrs))
	}
	cache[string(spec)] = v
	return v
}

// Transport validates traffic under prefix (e.g. "/developer/v1") against spec and reports
// mismatches with t.Errorf. Requests are checked too when checkRequests is set; binary bodies
// (uploads) are checked by their headers and parameters only, so they stream untouched.
type Transport struct {
	T             testing.TB
	Spec          []byte
	Prefix        string
	CheckRequests bool
	// Next sends the requests (default http.DefaultTransport).
	Next http.RoundTripper
	// Skip lists path suffixes not described by the spec (e.g. "/openapi.yaml").
	Skip []string
}

// RoundTrip sends req and validates both sides.
func (vt *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := vt.Next
	if next == nil {
		next = http.DefaultTransport
	}
	if !strings.Contains(req.URL.Path, vt.Prefix) || vt.skipped(req.URL.Path) {
		return next.RoundTrip(req)
	}
	v := Validator(vt.T, vt.Spec)
	if vt.CheckRequests {
		check, err := requestCopy(req)
		if err != nil {
			return nil, err
		}
		validating.Lock()
		ok, errs := v.ValidateHttpRequestSync(check)
		validating.Unlock()
		if !ok {
			vt.T.Errorf("request %s %s does not match the OpenAPI description:\n%s", req.Method, req.URL.Path, describe(errs))
		}
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	check := *resp
	check.Body = io.NopCloser(bytes.NewReader(body))
	vreq := req.Clone(req.Context())
	vreq.Body = http.NoBody
	validating.Lock()
	ok, errs := v.ValidateHttpResponse(vreq, &check)
	validating.Unlock()
	if !ok {
		vt.T.Errorf("%s %s → %d does not match the OpenAPI description:\n%s\nbody: %.500s", req.Method, req.URL.Path, resp.StatusCode, describe(errs), body)
	}
	return resp, nil
}

func (vt *Transport) skipped(path string) bool {
	for _, s := range vt.Skip {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// requestCopy returns a copy of req whose body the validator may read: JSON bodies are copied
// through GetBody, binary ones replaced by a token (their schema is any binary).
func requestCopy(req *http.Request) (*http.Request, error) {
	c := req.Clone(req.Context())
	// net/http writes Content-Length from the field, not the header map: show the validator the wire.
	if req.ContentLength > 0 || (req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody) {
		c.Header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	}
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		c.Body = http.NoBody
	case strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") && req.GetBody != nil:
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		c.Body = b
	default:
		c.Body = io.NopCloser(strings.NewReader("binary"))
	}
	return c, nil
}

// describe lists validation errors with their schema reasons.
func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%s\n", e.Error())
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "  %s at %s\n", se.Reason, se.Location)
		}
	}
	return b.String()
}
