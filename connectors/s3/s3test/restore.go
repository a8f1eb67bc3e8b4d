package s3test

import (
	"encoding/xml"
	"io"
	"net/http"
)

// restore answers RestoreObject (POST /bucket/key?restore) as
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_RestoreObject.html says:
//   - "If the object is not previously restored, then Amazon S3 returns 202 Accepted in the
//     response." The restore is then ongoing (HeadObject: x-amz-restore: ongoing-request="true")
//     until FinishRestore.
//   - "If the object is previously restored, Amazon S3 returns 200 OK in the response", and the
//     period is updated "relative to the current time".
//   - "Code: RestoreAlreadyInProgress, Cause: Object restore is already in progress, HTTP Status
//     Code: 409 Conflict" (testdata/restore_object_in_progress.http).
//   - An object not archived cannot be restored: 403 InvalidObjectState "Restore is not allowed
//     for the object's current storage class" (testdata/restore_object_not_archived.http).
//   - Days: "Lifetime of the active copy in days"
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_RestoreRequest.html), required for the
//     GLACIER and DEEP_ARCHIVE classes; for the Intelligent-Tiering archive tiers, "Objects in
//     S3 Intelligent-Tiering archive access tiers are not subject to restore expiry, so
//     specifying ExpirationInDays results in restore request failure"
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_control_S3InitiateRestoreObjectOperation.html).
//   - "Expedited retrievals and provisioned capacity are not available for objects stored in the
//     S3 Glacier Deep Archive storage class or S3 Intelligent-Tiering Deep Archive tier."
//
// The last two refusals' code and message are not documented; they are 400 InvalidArgument here.
func (a *AWS) restore(w http.ResponseWriter, r *http.Request, bucket, key string) {
	var req restoreRequest
	body, _ := io.ReadAll(r.Body)
	if err := xml.Unmarshal(body, &req); err != nil {
		s3Error(w, r, http.StatusBadRequest, "MalformedXML",
			"The XML you provided was not well-formed or did not validate against our published schema")
		return
	}
	tier := req.GlacierJobParameters.Tier
	if tier == "" {
		tier = req.Tier
	}
	if tier == "" {
		tier = "Standard" // "This is the default option for retrieval requests that do not specify the retrieval option."
	}
	if _, err := a.backend.HeadObject(bucket, key); err != nil {
		s3Error(w, r, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", "Key", key)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.objects[bucket+"/"+key]
	switch {
	case o == nil || !o.class.Archived():
		s3Error(w, r, http.StatusForbidden, "InvalidObjectState", "Restore is not allowed for the object's current storage class")
	case o.restore == "ongoing":
		s3Error(w, r, http.StatusConflict, "RestoreAlreadyInProgress", "Object restore is already in progress")
	case o.class.AccessTier != "" && req.Days > 0:
		s3Error(w, r, http.StatusBadRequest, "InvalidArgument", "Days must not be given for an object in an S3 Intelligent-Tiering archive tier")
	case o.class.AccessTier == "" && req.Days < 1:
		s3Error(w, r, http.StatusBadRequest, "InvalidArgument", "Days is required to restore an object from "+o.class.StorageClass)
	case tier == "Expedited" && o.class.deep():
		s3Error(w, r, http.StatusBadRequest, "InvalidArgument", "Expedited retrievals are not available for "+o.class.StorageClass+" "+o.class.AccessTier)
	case o.restore == "done":
		o.days, o.expiry = req.Days, expiry(a.now(), req.Days)
		w.WriteHeader(http.StatusOK)
	default:
		o.restore, o.days = "ongoing", req.Days
		a.restores = append(a.restores, RestoreRequest{Bucket: bucket, Key: key, Days: req.Days, Tier: tier})
		w.WriteHeader(http.StatusAccepted)
	}
}
