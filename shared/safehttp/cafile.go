package safehttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
)

// EnvCAFile names a PEM file of extra root certificates to trust, for tests and local development whose
// receivers use their own certificates (scripts/dev). Unset means the system roots only.
const EnvCAFile = "SAFEHTTP_CA_FILE"

// CAFromEnv is WithCAFile with the file named by EnvCAFile, read through getenv (a function's config.go
// passes the process environment's getter), when it is set.
func CAFromEnv(getenv func(string) string, base Options) (Options, error) {
	path := getenv(EnvCAFile)
	if path == "" {
		return base, nil
	}
	return WithCAFile(base, path)
}

// LazyCAFromEnv returns base with Roots reading the file named by EnvCAFile (read through getenv) on first
// use (LazyCAFile), when it is set; base unchanged otherwise. No file is read here: a process that makes no
// outbound request never parses the system roots or the file.
func LazyCAFromEnv(getenv func(string) string, base Options) Options {
	if path := getenv(EnvCAFile); path != "" {
		base.Roots = LazyCAFile(path)
	}
	return base
}

// WithCAFile returns base with TLSConfig trusting the system roots (or base's RootCAs, when set) plus the
// certificates of the PEM file at path. An unreadable file or one without certificates is an error naming
// EnvCAFile.
func WithCAFile(base Options, path string) (Options, error) {
	var from *x509.CertPool
	if base.TLSConfig != nil {
		from = base.TLSConfig.RootCAs
	}
	pool, err := caPool(from, path)
	if err != nil {
		return base, err
	}
	cfg := &tls.Config{}
	if base.TLSConfig != nil {
		cfg = base.TLSConfig.Clone()
	}
	cfg.RootCAs = pool
	base.TLSConfig = cfg
	return base, nil
}

// caPool returns a copy of from (the system roots when nil) with the certificates of the PEM file at path.
func caPool(from *x509.CertPool, path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvCAFile, err)
	}
	var pool *x509.CertPool
	if from != nil {
		pool = from.Clone()
	} else if pool, err = x509.SystemCertPool(); err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: %s holds no PEM certificate", EnvCAFile, path)
	}
	return pool, nil
}

// Roots is a root certificate pool built on first use, at most once, and shared by every copy of the
// Options that carry it: parsing the system roots and a PEM file costs milliseconds, which a function
// should pay on its first outbound TLS request, not at start. Its zero value and nil have no pool (the
// system roots, as crypto/tls loads them). It is safe for concurrent use.
type Roots struct {
	load func() (*x509.CertPool, error)
}

// LazyCAFile returns the Roots of the system roots plus the certificates of the PEM file at path, read and
// parsed on the first Pool call. Its errors are WithCAFile's.
func LazyCAFile(path string) *Roots {
	return &Roots{load: sync.OnceValues(func() (*x509.CertPool, error) { return caPool(nil, path) })}
}

// Pool builds the pool on the first call and returns it (and the error of that build) on every call.
func (r *Roots) Pool() (*x509.CertPool, error) {
	if r == nil || r.load == nil {
		return nil, nil
	}
	return r.load()
}

// Err is Pool's error: why the roots could not be loaded, or nil. It builds the pool on its first call.
func (r *Roots) Err() error {
	_, err := r.Pool()
	return err
}
