package localappwrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/appwrite/sdk-for-go/file"
	"github.com/appwrite/sdk-for-go/storage"
)

func TestStorageThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.s.SeedBucket(testProject, BucketSpec{ID: "b1", Name: "Bucket", MaximumFileSize: 1000, AllowedFileExtensions: []string{"txt"}}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t)
	createHook(t, f, "files", rec.ts.URL, []string{"buckets.b1.files.*.create"}, nil)
	st := storage.New(f.sdk(f.key))
	b, err := st.GetBucket("b1")
	if err != nil || b.Id != "b1" || b.MaximumFileSize != 1000 {
		t.Fatalf("bucket: %+v %v", b, err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "hello.txt")
	if err := os.WriteFile(p, []byte("hello world"), 0o600); err != nil {
		t.Fatal(err)
	}
	fl, err := st.CreateFile("b1", "unique()", file.NewInputFile(p, "hello.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fl.BucketId != "b1" || fl.Name != "hello.txt" || fl.SizeOriginal != 11 || !strings.HasPrefix(fl.MimeType, "text/plain") || fl.ChunksUploaded != 1 {
		t.Fatalf("file: %+v", fl)
	}
	big := filepath.Join(dir, "big.txt")
	_ = os.WriteFile(big, make([]byte, 2000), 0o600)
	_, err = st.CreateFile("b1", "unique()", file.NewInputFile(big, "big.txt"))
	wantErr(t, err, 400, ErrFileInvalidSize)
	exe := filepath.Join(dir, "x.exe")
	_ = os.WriteFile(exe, []byte("MZ"), 0o600)
	_, err = st.CreateFile("b1", "unique()", file.NewInputFile(exe, "x.exe"))
	wantErr(t, err, 400, ErrFileTypeUnsupported)
	if _, err := st.DeleteFile("b1", fl.Id); err != nil {
		t.Fatal(err)
	}
	_, err = st.DeleteFile("b1", fl.Id)
	wantErr(t, err, 404, ErrFileNotFound)
	_, err = st.GetBucket("nope")
	wantErr(t, err, 404, ErrBucketNotFound)
	f.flush(t)
	got := rec.all()
	if len(got) != 1 || !strings.HasPrefix(got[0].Header.Get("X-Appwrite-Webhook-Events"), "buckets.b1.files."+fl.Id+".create,") {
		t.Fatalf("file delivery: %+v", got)
	}
}
