package localappwrite

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"
)

// listenTLS serves r's server over https on a free port of its host (Options.HTTPS): a self-signed
// certificate for that address and localhost, made now, valid for a day.
func (r *Running) listenTLS() error {
	host, _, err := net.SplitHostPort(r.ln.Addr().String())
	if err != nil {
		return err
	}
	cert, pemBytes, err := selfSigned(host)
	if err != nil {
		return fmt.Errorf("localappwrite: https certificate: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return fmt.Errorf("localappwrite: listen https: %w", err)
	}
	r.CertPEM, r.SecureURL = pemBytes, "https://"+ln.Addr().String()
	r.tlsSrv = &http.Server{Handler: r.Server, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	// This goroutine runs the https listener; it ends when Shutdown closes that server.
	go func() { _ = r.tlsSrv.Serve(tls.NewListener(ln, r.tlsSrv.TLSConfig)) }()
	return nil
}

// SecureDomainURL is the https base URL of a function's local domain (Options.HTTPS), "" without https.
func (r *Running) SecureDomainURL(functionID string) string {
	if r.SecureURL == "" {
		return ""
	}
	return r.SecureURL + DomainPrefix + "/" + functionID
}

// selfSigned makes an ECDSA P-256 certificate for host (an IP or a name) and localhost.
func selfSigned(host string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "local Appwrite stand-in"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		DNSNames: []string{"localhost"},
	}
	if ip := net.ParseIP(host); ip != nil {
		tpl.IPAddresses = []net.IP{ip}
	} else {
		tpl.DNSNames = append(tpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
