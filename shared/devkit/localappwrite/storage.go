package localappwrite

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

type bucket struct {
	id, name          string
	enabled           bool
	fileSecurity      bool
	permissions       []string
	maximumFileSize   int
	allowedExtensions []string
	created, updated  time.Time
	files             map[string]*storedFile
}

type storedFile struct {
	id, bucketID string
	name         string
	mimeType     string
	data         []byte
	perms        []string
	created      time.Time
	updated      time.Time
}

// BucketSpec describes a bucket to seed.
type BucketSpec struct {
	// ID is the bucket id; Name defaults to it.
	ID   string `json:"bucketId"`
	Name string `json:"name"`
	// Permissions and FileSecurity are stored and returned (not enforced).
	Permissions  []string `json:"permissions"`
	FileSecurity bool     `json:"fileSecurity"`
	// MaximumFileSize is in bytes; 30000000 (_APP_STORAGE_LIMIT) when 0.
	MaximumFileSize int `json:"maximumFileSize"`
	// AllowedFileExtensions, when not empty, restricts uploads (lower-case, without dot).
	AllowedFileExtensions []string `json:"allowedFileExtensions"`
}

// SeedBucket creates (or replaces the settings of) a bucket.
func (s *Server) SeedBucket(projectID string, spec BucketSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.seedProjectLocked(projectID, "bucket", spec.ID)
	if err != nil {
		return err
	}
	now := s.now()
	b := pr.buckets[spec.ID]
	if b == nil {
		b = &bucket{id: spec.ID, created: now, files: map[string]*storedFile{}}
		pr.buckets[spec.ID] = b
	}
	b.name = orDefault(spec.Name, spec.ID)
	b.enabled = true
	b.fileSecurity = spec.FileSecurity
	b.permissions = slices.Clone(spec.Permissions)
	b.maximumFileSize = spec.MaximumFileSize
	if b.maximumFileSize <= 0 {
		b.maximumFileSize = 30000000
	}
	b.allowedExtensions = slices.Clone(spec.AllowedFileExtensions)
	b.updated = now
	return nil
}

func bucketModel(b *bucket) obj {
	return obj{
		{"$id", b.id}, {"$createdAt", formatTime(b.created)}, {"$updatedAt", formatTime(b.updated)},
		{"$permissions", nonNil(b.permissions)}, {"fileSecurity", b.fileSecurity}, {"name", b.name},
		{"enabled", b.enabled}, {"maximumFileSize", b.maximumFileSize},
		{"allowedFileExtensions", nonNil(b.allowedExtensions)}, {"compression", "none"}, {"encryption", false},
		{"antivirus", false}, {"transformations", false}, {"totalSize", b.totalSize()},
	}
}

func (b *bucket) totalSize() int {
	n := 0
	for _, f := range b.files {
		n += len(f.data)
	}
	return n
}

// fileModel renders Response/Model/File.php.
func fileModel(f *storedFile) obj {
	sum := md5.Sum(f.data)
	return obj{
		{"$id", f.id}, {"bucketId", f.bucketID}, {"$createdAt", formatTime(f.created)},
		{"$updatedAt", formatTime(f.updated)}, {"$permissions", nonNil(f.perms)}, {"name", f.name},
		{"signature", hex.EncodeToString(sum[:])}, {"mimeType", f.mimeType}, {"sizeOriginal", len(f.data)},
		{"chunksTotal", 1}, {"chunksUploaded", 1}, {"encryption", false}, {"compression", "none"},
	}
}

func (s *Server) findBucket(c *call) (*bucket, *APIError) {
	b := c.pr.buckets[c.r.PathValue("bucketId")]
	if b == nil {
		return nil, newErr(ErrBucketNotFound)
	}
	return b, nil
}

func (s *Server) getBucket(c *call) (int, any, *APIError) {
	b, err := s.findBucket(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, bucketModel(b), nil
}

func (s *Server) getFile(c *call) (int, any, *APIError) {
	b, err := s.findBucket(c)
	if err != nil {
		return 0, nil, err
	}
	f := b.files[c.r.PathValue("fileId")]
	if f == nil {
		return 0, nil, newErr(ErrFileNotFound)
	}
	return http.StatusOK, fileModel(f), nil
}

const fileEvent = "buckets.[bucketId].files.[fileId]."

// createFile accepts single-request uploads (the SDK sends files up to its 5 MiB chunk size in one request).
// Chunked uploads (Content-Range over several requests) are not supported by the stand-in.
func (s *Server) createFile(c *call) (int, any, *APIError) {
	b, err := s.findBucket(c)
	if err != nil {
		return 0, nil, err
	}
	id, err := c.customID("fileId")
	if err != nil {
		return 0, nil, err
	}
	up, ok := c.files["file"]
	if !ok {
		return 0, nil, missingParam("file")
	}
	perms, _, err := c.permissions()
	if err != nil {
		return 0, nil, err
	}
	if cr := c.r.Header.Get("Content-Range"); cr != "" {
		var start, end, size int
		if _, e := fmt.Sscanf(cr, "bytes %d-%d/%d", &start, &end, &size); e != nil || start != 0 || end != size-1 {
			return 0, nil, newErr(ErrInvalidContentRange, "%s Chunked uploads are not supported by the local stand-in.", errorCatalog[ErrInvalidContentRange].message)
		}
	}
	if len(up.data) == 0 {
		return 0, nil, newErr(ErrFileEmpty)
	}
	if len(up.data) > b.maximumFileSize {
		return 0, nil, newErr(ErrFileInvalidSize)
	}
	if len(b.allowedExtensions) > 0 {
		ext := strings.TrimPrefix(strings.ToLower(path.Ext(up.name)), ".")
		if !slices.Contains(b.allowedExtensions, ext) {
			return 0, nil, newErr(ErrFileTypeUnsupported)
		}
	}
	if _, dup := b.files[id]; dup {
		return 0, nil, newErr(ErrFileAlreadyExists)
	}
	mt := mime.TypeByExtension(path.Ext(up.name))
	if mt == "" {
		mt = http.DetectContentType(up.data)
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	now := s.now()
	f := &storedFile{id: id, bucketID: b.id, name: up.name, mimeType: mt, data: up.data, perms: perms, created: now, updated: now}
	b.files[id] = f
	m := fileModel(f)
	c.emit(fileEvent+"create", m, param{"bucketId", b.id}, param{"fileId", id})
	return http.StatusCreated, m, nil
}

func (s *Server) deleteFile(c *call) (int, any, *APIError) {
	b, err := s.findBucket(c)
	if err != nil {
		return 0, nil, err
	}
	f := b.files[c.r.PathValue("fileId")]
	if f == nil {
		return 0, nil, newErr(ErrFileNotFound)
	}
	delete(b.files, f.id)
	c.emit(fileEvent+"delete", fileModel(f), param{"bucketId", b.id}, param{"fileId", f.id})
	return http.StatusNoContent, nil, nil
}

// multipartBody is a parsed multipart/form-data body.
type multipartBody struct {
	values map[string][]string
	files  map[string]uploaded
}

func newMultipart(body []byte, boundary string) (*multipartBody, error) {
	if boundary == "" {
		return nil, fmt.Errorf("missing boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	out := &multipartBody{values: map[string][]string{}, files: map[string]uploaded{}}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		if p.FileName() != "" {
			out.files[p.FormName()] = uploaded{name: p.FileName(), data: data}
		} else {
			out.values[p.FormName()] = append(out.values[p.FormName()], string(data))
		}
	}
}
