package s3test

import (
	"encoding/xml"
	"html"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Objects in the archive storage classes "are archived and are not accessible in real time: the
// S3 Glacier Flexible Retrieval storage class, the S3 Glacier Deep Archive storage class, the S3
// Intelligent-Tiering Archive Access tier, the S3 Intelligent-Tiering Deep Archive Access tier"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/archived-objects.html). They are listed
// like any other, with their StorageClass; GetObject refuses them with 403 InvalidObjectState
// until a restore (RestoreObject) has completed.

// Class is where an object is stored: its storage class and, within INTELLIGENT_TIERING, its
// archive access tier.
type Class struct {
	// StorageClass is as ListObjectsV2 and HeadObject's x-amz-storage-class show it.
	StorageClass string
	// AccessTier is ARCHIVE_ACCESS or DEEP_ARCHIVE_ACCESS for an INTELLIGENT_TIERING object in
	// an archive tier (HeadObject's x-amz-archive-status), "" otherwise.
	AccessTier string
}

// Storage classes and tiers.
var (
	// Glacier is S3 Glacier Flexible Retrieval: archived.
	Glacier = Class{StorageClass: "GLACIER"}
	// DeepArchive is S3 Glacier Deep Archive: archived.
	DeepArchive = Class{StorageClass: "DEEP_ARCHIVE"}
	// ArchiveAccess is the Intelligent-Tiering Archive Access tier: archived.
	ArchiveAccess = Class{StorageClass: "INTELLIGENT_TIERING", AccessTier: "ARCHIVE_ACCESS"}
	// DeepArchiveAccess is the Intelligent-Tiering Deep Archive Access tier: archived.
	DeepArchiveAccess = Class{StorageClass: "INTELLIGENT_TIERING", AccessTier: "DEEP_ARCHIVE_ACCESS"}
	// IntelligentTiering is Intelligent-Tiering in a tier read in real time (Frequent,
	// Infrequent or Archive Instant Access).
	IntelligentTiering = Class{StorageClass: "INTELLIGENT_TIERING"}
	// GlacierInstant is S3 Glacier Instant Retrieval: read in real time.
	GlacierInstant = Class{StorageClass: "GLACIER_IR"}
)

// Archived reports whether objects in c must be restored before GetObject serves them.
func (c Class) Archived() bool {
	return c.StorageClass == "GLACIER" || c.StorageClass == "DEEP_ARCHIVE" || c.AccessTier != ""
}

// deep reports whether c is a deep archive, where Expedited retrievals are not available.
func (c Class) deep() bool {
	return c.StorageClass == "DEEP_ARCHIVE" || c.AccessTier == "DEEP_ARCHIVE_ACCESS"
}

// RestoreRequest is a RestoreObject request the server accepted (202).
type RestoreRequest struct {
	// Bucket and Key name the object.
	Bucket, Key string
	// Days is the restored copy's lifetime (0: none given, as for Intelligent-Tiering).
	Days int
	// Tier is the retrieval tier (Standard when none is given).
	Tier string
}

// archived is the storage state of an object not in STANDARD.
type archived struct {
	class Class
	// restore is "", "ongoing" or "done" (a GLACIER or DEEP_ARCHIVE copy readable until expiry).
	restore string
	days    int
	expiry  time.Time
}

func (o *archived) readable() bool { return !o.class.Archived() || o.restore == "done" }

// Transition moves an object (put through the backend) to class, as a lifecycle rule or
// Intelligent-Tiering's automatic archiving does; any restore is forgotten.
func (a *AWS) Transition(bucket, key string, c Class) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.objects[bucket+"/"+key] = &archived{class: c}
}

// FinishRestore completes the ongoing restore of an object. A GLACIER or DEEP_ARCHIVE object
// gets a temporary copy: "Amazon S3 calculates the expiry date by adding the number of days that
// you specify in the restoration request to the time when the requested restoration is
// completed, and then rounding to the next day at midnight UTC"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/restoring-objects.html); an
// Intelligent-Tiering one "moves back into the Frequent Access tier" (same page). It reports
// whether a restore was ongoing.
func (a *AWS) FinishRestore(bucket, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.objects[bucket+"/"+key]
	if o == nil || o.restore != "ongoing" {
		return false
	}
	if o.class.StorageClass == "INTELLIGENT_TIERING" {
		o.class, o.restore = IntelligentTiering, ""
		return true
	}
	o.restore, o.expiry = "done", expiry(a.now(), o.days)
	return true
}

// expiry is when a copy restored at t for days expires: rounded up to midnight UTC.
func expiry(t time.Time, days int) time.Time {
	return t.UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// ExpireRestore removes the temporary copy of a restored object: it is archived again.
func (a *AWS) ExpireRestore(bucket, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if o := a.objects[bucket+"/"+key]; o != nil && o.restore == "done" {
		o.restore = ""
	}
}

// Restores returns the RestoreObject requests accepted so far, in order.
func (a *AWS) Restores() []RestoreRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]RestoreRequest(nil), a.restores...)
}

func (a *AWS) forget(bucket, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.objects, bucket+"/"+key)
}

// state returns a copy of the object's state, nil when it is in STANDARD or gone.
func (a *AWS) state(bucket, key string) *archived {
	a.mu.Lock()
	o := a.objects[bucket+"/"+key]
	a.mu.Unlock()
	if o == nil {
		return nil
	}
	if _, err := a.backend.HeadObject(bucket, key); err != nil { // deleted through the backend
		a.forget(bucket, key)
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := *o
	return &c
}

// contents matches an object of a listing (ListObjects, ListObjectsV2), its key and its
// StorageClass element.
var contents = regexp.MustCompile(`(?s)<Contents>(.*?)</Contents>`)
var (
	keyElem   = regexp.MustCompile(`<Key>(.*?)</Key>`)
	classElem = regexp.MustCompile(`<StorageClass>[^<]*</StorageClass>`)
)

// list serves a listing with each object's storage class, which gofakes3 leaves out:
// ListObjectsV2's Contents carry "StorageClass: The class of storage used to store the object"
// (STANDARD, GLACIER, DEEP_ARCHIVE, INTELLIGENT_TIERING, ...;
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_Object.html), unchanged by a restore:
// "When a temporary copy of the restored object is created, the object's storage class remains
// the same" (archived-objects.html). An Intelligent-Tiering object is listed as
// INTELLIGENT_TIERING whatever its tier.
func (a *AWS) list(w http.ResponseWriter, r *http.Request, bucket string) {
	rec := record(a.next, r)
	body := contents.ReplaceAllStringFunc(rec.Body.String(), func(c string) string {
		class := "STANDARD"
		if m := keyElem.FindStringSubmatch(c); m != nil {
			a.mu.Lock()
			if o := a.objects[bucket+"/"+html.UnescapeString(m[1])]; o != nil {
				class = o.class.StorageClass
			}
			a.mu.Unlock()
		}
		c = classElem.ReplaceAllString(c, "")
		return strings.TrimSuffix(c, "</Contents>") + "<StorageClass>" + class + "</StorageClass></Contents>"
	})
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	io.WriteString(w, body)
}

// object sets the headers S3 adds to HeadObject and GetObject of an object not in STANDARD, and
// refuses GetObject of an archived one; it reports whether gofakes3 is to serve the request.
// HeadObject (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html):
// x-amz-storage-class "for all objects except for S3 Standard storage class objects";
// x-amz-archive-status, "The archive state of the head object": ARCHIVE_ACCESS |
// DEEP_ARCHIVE_ACCESS; x-amz-restore: "If an archive copy is already restored, the header value
// indicates when Amazon S3 is scheduled to delete the object copy. For example: x-amz-restore:
// ongoing-request="false", expiry-date="Fri, 21 Dec 2012 00:00:00 GMT". If the object
// restoration is in progress, the header returns the value ongoing-request="true"."
// GetObject (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html): "If the
// object you are retrieving is stored in the S3 Glacier Flexible Retrieval storage class, the S3
// Glacier Deep Archive storage class, the S3 Intelligent-Tiering Archive Access tier, or the S3
// Intelligent-Tiering Deep Archive Access tier, before you can retrieve the object you must first
// restore a copy using RestoreObject. Otherwise, this operation returns an InvalidObjectState
// error" — 403, with the StorageClass and AccessTier the API model gives the error (the body as
// S3 sends it is in testdata/get_object_invalid_object_state.http); also while a restore is
// ongoing.
func (a *AWS) object(w http.ResponseWriter, r *http.Request, bucket, key string) bool {
	o := a.state(bucket, key)
	if o == nil {
		return true
	}
	h := w.Header()
	h.Set("X-Amz-Storage-Class", o.class.StorageClass)
	if o.class.AccessTier != "" {
		h.Set("X-Amz-Archive-Status", o.class.AccessTier)
	}
	switch o.restore {
	case "ongoing":
		h.Set("X-Amz-Restore", `ongoing-request="true"`)
	case "done":
		h.Set("X-Amz-Restore", `ongoing-request="false", expiry-date="`+o.expiry.Format(http.TimeFormat)+`"`)
	}
	if r.Method == http.MethodGet && !o.readable() {
		for _, k := range []string{"X-Amz-Storage-Class", "X-Amz-Archive-Status", "X-Amz-Restore"} {
			h.Del(k)
		}
		extra := []string{"StorageClass", o.class.StorageClass}
		if o.class.AccessTier != "" {
			extra = append(extra, "AccessTier", o.class.AccessTier)
		}
		s3Error(w, r, http.StatusForbidden, "InvalidObjectState", "The operation is not valid for the object's storage class", extra...)
		return false
	}
	return true
}

// restoreRequest is RestoreObject's body (https://docs.aws.amazon.com/AmazonS3/latest/API/API_RestoreRequest.html).
type restoreRequest struct {
	XMLName              xml.Name `xml:"RestoreRequest"`
	Days                 int      `xml:"Days"`
	Tier                 string   `xml:"Tier"`
	GlacierJobParameters struct {
		Tier string `xml:"Tier"`
	} `xml:"GlacierJobParameters"`
}
