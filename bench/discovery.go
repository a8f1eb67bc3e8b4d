package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/connectors/s3/s3test"
	"github.com/transcript-bridge/bridge/internal/s3client"
)

func init() { Register("discovery", Discovery) }

// DiscoveryLatency is what the fakes of the discovery workload wait before serving each request.
const DiscoveryLatency = 20 * time.Millisecond

// Discovery lists 100,000 objects from an S3 bucket (gofakes3) and 10,000 files from a Drive
// folder (the Drive fake), each with DiscoveryLatency per request, through the pipeline into a
// SQLite store, then scans each again; beside each first scan, a bare pagination loop over the
// same listing. With env.Short: 5,000 objects and 1,000 files. It fails when a fake, the store
// or a scan fails, or when a scan does not queue every object.
func Discovery(ctx context.Context, env Env) (*Report, error) {
	objects, files := 100000, 10000
	if env.Short {
		objects, files = 5000, 1000
	}
	s3Results, err := S3Discovery(ctx, env, objects)
	if err != nil {
		return nil, err
	}
	driveResults, err := DriveDiscovery(ctx, env, files)
	if err != nil {
		return nil, err
	}
	return &Report{Results: append(s3Results, driveResults...)}, nil
}

// S3Discovery is Discovery's S3 half over objects objects: figures s3_discovery, s3_rescan_queued,
// s3_rescan_object_requests and s3_discovery_peak_rss. The peak RSS is the whole process's: it
// includes the in-process gofakes3 server (on its bolt backend, in env.Dir, so its objects are
// not on the heap) and the SQLite store. It fails as Discovery does.
func S3Discovery(ctx context.Context, env Env, objects int) ([]Result, error) {
	dir, err := os.MkdirTemp(env.Dir, "s3-discovery-")
	if err != nil {
		return nil, fmt.Errorf("bench discovery: s3: %w", err)
	}
	fake, err := s3test.Start(filepath.Join(dir, "bucket.bolt"), DiscoveryLatency)
	if err != nil {
		return nil, err
	}
	defer fake.Close()
	env.Logf("s3: putting %d objects into gofakes3", objects)
	if err := fake.Fill(ctx, objects); err != nil {
		return nil, err
	}
	src, err := s3.New(ctx, s3.Config{Bucket: s3test.Bucket, Endpoint: fake.URL, PathStyle: true, Region: "us-east-1",
		AccessKeyID: "test", SecretAccessKey: "test-secret", Prefix: "calls/", OwnerFrom: `key:^calls/([^/]+)/`})
	if err != nil {
		return nil, fmt.Errorf("bench discovery: s3 source: %w", err)
	}
	scans, err := scanAndRescan(ctx, env, dir, "s3", src, objects, func() int64 { return fake.PerObject.Swap(0) }, func() {})
	if err != nil {
		return nil, err
	}
	env.Logf("s3: bare ListObjectsV2 loop")
	ref, err := listObjectsLoop(ctx, fake.URL, objects)
	if err != nil {
		return nil, err
	}
	return []Result{
		Goal{MaxValue: Ref(60)}.Figure("s3_discovery", scans.took.Seconds(), "s", Ref(ref.Seconds()), "bare ListObjectsV2 loop"),
		Goal{MaxValue: Ref(0)}.Figure("s3_rescan_queued", float64(scans.requeued), "objects", nil, ""),
		Goal{MaxValue: Ref(0)}.Figure("s3_rescan_object_requests", float64(scans.perItem), "requests", nil, ""),
		Goal{MaxValue: Ref(200)}.Figure("s3_discovery_peak_rss", float64(scans.peakRSS)/(1<<20), "MiB", nil, ""),
	}, nil
}

// scans is what scanAndRescan measured.
type scans struct {
	took              time.Duration
	peakRSS           uint64
	requeued, perItem int64
}

// scanAndRescan scans src as source typ through a pipeline into a new SQLite store in dir,
// timing the first scan and taking the process's peak RSS meanwhile, then scans again once per
// rescans, calling it first: requeued is what the re-scans queued, perItem what perItem (which
// reads and resets the fake's count of per-item requests) says they requested. It fails when
// the store or a scan does, or when the first scan queues other than want or makes a per-item
// request (both sources are list-only).
func scanAndRescan(ctx context.Context, env Env, dir, typ string, src connectors.Source, want int, perItem func() int64, rescans ...func()) (scans, error) {
	store, err := sqlite.Open(ctx, filepath.Join(dir, "bridge.db"))
	if err != nil {
		return scans{}, fmt.Errorf("bench discovery: %s: store: %w", typ, err)
	}
	defer store.Close()
	instance, err := store.InstanceID(ctx)
	if err != nil {
		return scans{}, fmt.Errorf("bench discovery: %s: store: %w", typ, err)
	}
	p := &bridge.Pipeline{Store: store, Instance: instance, Sources: map[string]*bridge.SourceConfig{typ: {Name: typ, Type: typ, Source: src}}}
	var s scans
	env.Logf("%s: first scan through the pipeline", typ)
	perItem()
	var n int
	var scanErr error
	s.peakRSS, err = peakRSS(func() {
		start := time.Now()
		n, scanErr = p.Scan(ctx, typ)
		s.took = time.Since(start)
	})
	if err = cmp.Or(scanErr, err); err != nil {
		return scans{}, fmt.Errorf("bench discovery: %s: first scan: %w", typ, err)
	}
	if first := perItem(); n != want || first != 0 {
		return scans{}, fmt.Errorf("bench discovery: %s: first scan queued %d with %d per-item requests, want %d from the listing alone", typ, n, first, want)
	}
	env.Logf("%s: %d queued in %v, peak RSS %.0f MiB; re-scan", typ, n, s.took.Round(time.Millisecond), float64(s.peakRSS)/(1<<20))
	perItem()
	for _, before := range rescans {
		before()
		again, err := p.Scan(ctx, typ)
		if err != nil {
			return scans{}, fmt.Errorf("bench discovery: %s: re-scan: %w", typ, err)
		}
		s.requeued += int64(again)
	}
	s.perItem = perItem()
	return s, nil
}

// listObjectsLoop lists the fake's bucket with a bare ListObjectsV2 paginator (1,000 keys a page,
// as the source asks) and returns the time it took. It fails when a page does, or when the
// listing does not hold want keys.
func listObjectsLoop(ctx context.Context, url string, want int) (time.Duration, error) {
	client, err := s3client.New(ctx, s3client.Options{Region: "us-east-1", Endpoint: url, PathStyle: true, AccessKeyID: "test", SecretAccessKey: "test-secret"})
	if err != nil {
		return 0, fmt.Errorf("bench discovery: s3 reference client: %w", err)
	}
	start := time.Now()
	pages := awss3.NewListObjectsV2Paginator(client, &awss3.ListObjectsV2Input{Bucket: aws.String(s3test.Bucket),
		Prefix: aws.String("calls/"), MaxKeys: aws.Int32(1000)})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("bench discovery: s3 reference: list: %w", err)
		}
		n += len(page.Contents)
	}
	took := time.Since(start)
	if n != want {
		return 0, fmt.Errorf("bench discovery: s3 reference: listed %d, want %d", n, want)
	}
	return took, nil
}
