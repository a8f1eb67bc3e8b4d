package s3test

import "net/http"

// A bucket lives in one region. S3 answers a request that reaches it through another region's
// endpoint (here: signed for another region, as the SDK signs for the region whose endpoint it
// calls) with 301 Moved Permanently and the error PermanentRedirect: "The bucket you are
// attempting to access must be addressed using the specified endpoint. Please send all future
// requests to this endpoint." (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html,
// "PermanentRedirect ... 301 Moved Permanently"; the body as S3 sends it, with <Bucket> and
// <Endpoint>, is in testdata/permanent_redirect.http). It names the bucket's region in the
// x-amz-bucket-region header, on every operation (the SDKs read it there:
// https://docs.aws.amazon.com/sdk-for-ruby/v3/api/Aws/S3/Errors/PermanentRedirect.html) and on
// HeadBucket, whose 301 has no body (https://rubydoc.info/gems/aws-sdk-s3/Aws/S3/Errors/Http301Error:
// "PermanentRedirect (HeadBucket case - no body)"). The SDKs do not follow it (no Location).

// redirect answers a request signed for another region than the bucket's.
func (a *AWS) redirect(w http.ResponseWriter, r *http.Request, bucket string) {
	w.Header().Set("X-Amz-Bucket-Region", a.region)
	s3Error(w, r, http.StatusMovedPermanently, "PermanentRedirect",
		"The bucket you are attempting to access must be addressed using the specified endpoint. Please send all future requests to this endpoint.",
		"Bucket", bucket, "Endpoint", bucket+".s3."+a.region+".amazonaws.com")
}

// anonymous answers an unsigned request. The bucket is private: S3 refuses it with 403
// AccessDenied; a HeadBucket, signed or not, still carries the bucket's region: "You can make a
// HeadBucket call on any bucket name to any Region in the partition, and regardless of the
// permissions on the bucket, you will receive a response header with the correct bucket
// location" (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html). This is how
// the SDK's manager.GetBucketRegion finds a bucket's region: an unsigned HeadBucket.
func (a *AWS) anonymous(w http.ResponseWriter, r *http.Request, key string) {
	if key == "" && r.Method == http.MethodHead {
		w.Header().Set("X-Amz-Bucket-Region", a.region)
	}
	s3Error(w, r, http.StatusForbidden, "AccessDenied", "Access Denied")
}
