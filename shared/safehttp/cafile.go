package safehttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// EnvCAFile names a PEM file of extra root certificates to trust, for tests and local development whose
// receivers use their own certificates (scripts/dev). Unset means the system roots only.
const EnvCAFile = "SAFEHTTP_CA_FILE"

// CAFromEnv is WithCAFile with the file named by EnvCAFile, when it is set.
func CAFromEnv(base Options) (Options, error) {
	path := os.Getenv(EnvCAFile)
	if path == "" {
		return base, nil
	}
	return WithCAFile(base, path)
}

// WithCAFile returns base with TLSConfig trusting the system roots (or base's RootCAs, when set) plus the
// certificates of the PEM file at path. An unreadable file or one without certificates is an error naming
// EnvCAFile.
func WithCAFile(base Options, path string) (Options, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("%s: %w", EnvCAFile, err)
	}
	var pool *x509.CertPool
	if base.TLSConfig != nil && base.TLSConfig.RootCAs != nil {
		pool = base.TLSConfig.RootCAs.Clone()
	} else if pool, err = x509.SystemCertPool(); err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return base, fmt.Errorf("%s: %s holds no PEM certificate", EnvCAFile, path)
	}
	cfg := &tls.Config{}
	if base.TLSConfig != nil {
		cfg = base.TLSConfig.Clone()
	}
	cfg.RootCAs = pool
	base.TLSConfig = cfg
	return base, nil
}
