package s3test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// AWS is an http.Handler in front of gofakes3 that answers as Amazon S3 does where gofakes3
// does not: a bucket lives in one region and answers requests signed for another with 301
// PermanentRedirect (regions.go), and objects in the archive storage classes are listed but not
// served until restored (archive.go). Each behaviour cites the S3 documentation it follows;
// testdata/ holds S3's own answers, which aws_test.go compares this handler's with. It serves
// path-style requests (endpoint/bucket/key), as the connector's tests make them.
type AWS struct {
	next    http.Handler
	backend gofakes3.Backend
	// region is the buckets' region; empty, requests signed for any region are served.
	region string
	// now tells the time of a restore's expiry (time.Now unless SetNow).
	now func() time.Time

	mu       sync.Mutex
	objects  map[string]*archived // by bucket/key: objects not in STANDARD
	restores []RestoreRequest     // RestoreObject requests accepted, in order
}

// NewAWS serves backend (gofakes3) as S3 does in region; an empty region serves requests signed
// for any region (gofakes3's own behaviour).
func NewAWS(backend gofakes3.Backend, region string) *AWS {
	return &AWS{next: gofakes3.New(backend).Server(), backend: backend, region: region, now: time.Now,
		objects: map[string]*archived{}}
}

// SetNow sets the clock that dates restored copies' expiry.
func (a *AWS) SetNow(now func() time.Time) { a.now = now }

// Region is the buckets' region ("" when any region is served).
func (a *AWS) Region() string { return a.region }

// ServeHTTP answers r as S3 would, passing to gofakes3 what it answers faithfully.
func (a *AWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket != "" && a.region != "" {
		switch signed := signingRegion(r); {
		case signed == "":
			a.anonymous(w, r, key)
			return
		case signed != a.region:
			a.redirect(w, r, bucket)
			return
		}
		if key == "" && r.Method == http.MethodHead {
			// HeadBucket: "you will receive a response header with the correct bucket location"
			// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html).
			w.Header().Set("X-Amz-Bucket-Region", a.region)
		}
	}
	switch {
	case key == "" && r.Method == http.MethodGet && bucket != "" && !r.URL.Query().Has("location"):
		a.list(w, r, bucket)
	case key != "" && r.Method == http.MethodPost && r.URL.Query().Has("restore"):
		a.restore(w, r, bucket, key)
	case key != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		if a.object(w, r, bucket, key) {
			a.next.ServeHTTP(w, r)
		}
	case key != "" && (r.Method == http.MethodPut || r.Method == http.MethodDelete):
		a.forget(bucket, key) // a new object (or none) is in STANDARD, with no restore
		a.next.ServeHTTP(w, r)
	default:
		a.next.ServeHTTP(w, r)
	}
}

// credentialScope matches the region of a SigV4 credential scope, in an Authorization header
// ("Credential=AKID/20130524/us-east-1/s3/aws4_request") or a presigned URL's X-Amz-Credential.
// https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-auth-using-authorization-header.html
var credentialScope = regexp.MustCompile(`^[^/]+/\d{8}/([^/]+)/s3/aws4_request$`)

// signingRegion is the region r was signed for, "" when it is not signed (or not with SigV4).
func signingRegion(r *http.Request) string {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); cred == "" && strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		for f := range strings.SplitSeq(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(f), "Credential="); ok {
				cred = v
			}
		}
	}
	if m := credentialScope.FindStringSubmatch(cred); m != nil {
		return m[1]
	}
	return ""
}

// s3Error writes S3's REST error response: the status, and unless the request is a HEAD (whose
// answers have no body), <Error> with the code, the message and the extra elements in order.
// https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html#RESTErrorResponses
func s3Error(w http.ResponseWriter, r *http.Request, status int, code, message string, extra ...string) {
	id := fmt.Sprintf("%016X", time.Now().UnixNano())
	w.Header().Set("X-Amz-Request-Id", id)
	w.Header().Set("X-Amz-Id-2", "fake/"+id)
	w.Header().Set("Server", "AmazonS3")
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Error><Code>%s</Code><Message>%s</Message>`, code, xmlText(message))
	for i := 0; i+1 < len(extra); i += 2 {
		fmt.Fprintf(&b, "<%s>%s</%s>", extra[i], xmlText(extra[i+1]), extra[i])
	}
	fmt.Fprintf(&b, "<RequestId>%s</RequestId><HostId>fake/%s</HostId></Error>", id, id)
	w.Write([]byte(b.String()))
}

// xmlText escapes s for an XML element.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// record runs h on r and returns what it answered, for a handler that rewrites an answer.
func record(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}
