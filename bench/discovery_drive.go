package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2/google"
	"google.golang.org/api/drive/v3"
	"google.golang.org/api/option"

	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

// driveOwner is the user the Drive workload impersonates; the files are spread over it and two
// others.
const driveOwner = "sam@acme.test"

// DriveDiscovery is Discovery's Drive half over files files in one folder: figures
// drive_discovery, drive_rescan_queued and drive_rescan_file_requests. The re-scan is two
// scans: one through the changes feed, then the periodic full pass (the clock moved past
// full_every), which lists everything again for the store to recognise. It fails as Discovery
// does.
func DriveDiscovery(ctx context.Context, env Env, files int) ([]Result, error) {
	dir, err := os.MkdirTemp(env.Dir, "drive-discovery-")
	if err != nil {
		return nil, fmt.Errorf("bench discovery: drive: %w", err)
	}
	fake, stop, err := gdrivetest.Serve()
	if err != nil {
		return nil, fmt.Errorf("bench discovery: drive: %w", err)
	}
	defer stop()
	folder := fake.Folder("Calls", gdrivetest.Root(driveOwner), driveOwner, "")
	owners := []string{driveOwner, "kim@acme.test", "ana@acme.test"}
	for i := range files {
		fake.Put(fmt.Sprintf("m-%06d.wav", i), "audio/wav", folder, owners[i%3], "", []byte(strconv.Itoa(i)))
	}
	fake.Latency = DiscoveryLatency
	var clock atomic.Int64 // what the source's clock adds to time.Now, for the full pass
	src, err := gdrive.New(ctx, gdrive.Config{FolderID: folder, Subjects: []string{driveOwner}, Credentials: fake.ServiceAccountJSON(),
		Endpoint: fake.URL, MinBackoff: time.Millisecond, Now: func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }})
	if err != nil {
		return nil, fmt.Errorf("bench discovery: drive source: %w", err)
	}
	env.Logf("drive: %d files in the fake", files)
	lastPerFile := 0
	perFile := func() int64 {
		_, n := fake.Counts()
		d := n - lastPerFile
		lastPerFile = n
		return int64(d)
	}
	scans, err := scanAndRescan(ctx, env, dir, "gdrive", src, files, perFile,
		func() {}, // the changes feed
		func() { clock.Store(int64(2 * time.Hour)) }) // past full_every (1 h): the full pass
	if err != nil {
		return nil, err
	}
	env.Logf("drive: bare files.list loop")
	ref, err := filesListLoop(ctx, fake, folder, files)
	if err != nil {
		return nil, err
	}
	return []Result{
		Goal{MaxValue: Ref(60)}.Figure("drive_discovery", scans.took.Seconds(), "s", Ref(ref.Seconds()), "bare files.list loop"),
		Goal{MaxValue: Ref(0)}.Figure("drive_rescan_queued", float64(scans.requeued), "files", nil, ""),
		Goal{MaxValue: Ref(0)}.Figure("drive_rescan_file_requests", float64(scans.perItem), "requests", nil, ""),
	}, nil
}

// filesListLoop lists folder's files with a bare files.list pagination loop (1,000 a page, the
// fields the source asks for) as driveOwner, and returns the time it took. It fails when a page
// does, or when the listing does not hold want files.
func filesListLoop(ctx context.Context, fake *gdrivetest.Server, folder string, want int) (time.Duration, error) {
	jwt, err := google.JWTConfigFromJSON(fake.ServiceAccountJSON(), drive.DriveReadonlyScope)
	if err != nil {
		return 0, fmt.Errorf("bench discovery: drive reference: credentials: %w", err)
	}
	jwt.Subject = driveOwner
	svc, err := drive.NewService(ctx, option.WithHTTPClient(jwt.Client(ctx)), option.WithEndpoint(fake.URL+"/drive/v3/"))
	if err != nil {
		return 0, fmt.Errorf("bench discovery: drive reference: client: %w", err)
	}
	start := time.Now()
	n, token := 0, ""
	for {
		call := svc.Files.List().Q(fmt.Sprintf("'%s' in parents and trashed = false", folder)).PageSize(1000).Context(ctx).
			Fields("nextPageToken,files(id,name,mimeType,size,md5Checksum,headRevisionId,createdTime,modifiedTime,owners,parents)")
		if token != "" {
			call = call.PageToken(token)
		}
		page, err := call.Do()
		if err != nil {
			return 0, fmt.Errorf("bench discovery: drive reference: files.list: %w", err)
		}
		n += len(page.Files)
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	took := time.Since(start)
	if n != want {
		return 0, fmt.Errorf("bench discovery: drive reference: listed %d, want %d", n, want)
	}
	return took, nil
}
